import fs from 'node:fs';
import path from 'node:path';
import type { CsvRow } from '../../src/app/csv-drop-check.js';
import { latestByKey, readCsvRows } from '../../src/app/csv-drop-check.js';
import { probeMariadb, probePostgres, requireService } from '../helpers/services.js';
import { createTarget, type SqlTarget } from '../helpers/sql-targets.js';
import { probeSshd, startSshd, type SshdHandle } from '../helpers/sshd.js';

/** What a sink holds for one table, read the way the ERP reads it. */
export interface SinkTable {
  /** Latest version per key (files: by _updated_at then _synced_at; SQL: the row). */
  latest: Map<string, CsvRow>;
  /** SQL: rows beyond one per key. Files: keys whose newest version appears with different content. */
  duplicates: number;
}

export interface ChaosSink {
  readonly name: string;
  readonly kind: 'csv' | 'sqlite' | 'postgres' | 'mariadb' | 'sftp';
  /** `connectors.<name>` of the daemon's config. */
  readonly connector: Record<string, unknown>;
  read(table: string): Promise<SinkTable>;
  close(): Promise<void>;
}

/** A sink the run wanted but could not use (only outside CI; under CI=true it throws). */
export interface SkippedSink {
  readonly name: string;
  readonly reason: string;
}

export interface SinkSet {
  sinks: ChaosSink[];
  skipped: SkippedSink[];
  /** The SQLite sink's file (also hosts the outbound staging table), when the SQL connector exists. */
  sqliteFile?: string;
  close(): Promise<void>;
}

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const connectorExists = (name: string) => fs.existsSync(path.join(REPO, 'connectors', name, 'index.ts'));

/**
 * Files: newest version per key; a key whose newest version exists twice with other content counts
 * once. Sync metadata (`_synced_at`, `_run_id`: when and by which run it was written) is not content.
 */
function readFiles(dir: string, table: string): SinkTable {
  const rows = readCsvRows(dir, table);
  const latest = latestByKey(rows);
  let duplicates = 0;
  // Echo marks (`origin_*`, `_raw._freightSync`) are added by this daemon, not the API: a load it
  // created is pulled once before its outbox row knows the reference number (ambiguous create) and
  // the same version again with the mark — the later write wins by `_synced_at`, as in SQL.
  const strip = ({ _synced_at: _s, _run_id: _r, origin_erp_key: _e, origin_outbox_id: _o, _raw: raw, ...rest }: CsvRow) => {
    let data: unknown = raw;
    try {
      const parsed = JSON.parse(raw ?? 'null') as Record<string, unknown> | null;
      if (parsed && typeof parsed === 'object') delete parsed['_freightSync'];
      data = parsed;
    } catch {
      // not JSON: compared as text
    }
    return JSON.stringify({ ...rest, _raw: data });
  };
  const newest = new Map<string, Set<string>>();
  for (const row of rows) {
    const key = row['record_key']!;
    if (row['_updated_at'] !== latest.get(key)?.['_updated_at']) continue;
    const set = newest.get(key) ?? new Set<string>();
    set.add(strip(row));
    newest.set(key, set);
  }
  for (const set of newest.values()) if (set.size > 1) duplicates += 1;
  return { latest, duplicates };
}

function iso(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number') return new Date(value).toISOString();
  const text = String(value ?? '');
  // SQLite/MariaDB may hand back "2025-01-01 10:00:00.000" without a zone; the sink writes UTC.
  const parsed = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`);
  return Number.isNaN(parsed) ? text : new Date(parsed).toISOString();
}

function sqlSink(name: string, kind: ChaosSink['kind'], target: SqlTarget): ChaosSink {
  return {
    name,
    kind,
    connector: { type: 'sql', options: { ...target.options } },
    async read(table) {
      const rows = (await target.reader.selectFrom(target.table(table)).select(['record_key', '_updated_at', '_op']).execute()) as Record<string, unknown>[];
      const latest = new Map<string, CsvRow>();
      for (const row of rows) latest.set(String(row['record_key']), { record_key: String(row['record_key']), _updated_at: iso(row['_updated_at']), _op: String(row['_op']) });
      return { latest, duplicates: rows.length - latest.size };
    },
    close: () => target.drop(),
  };
}

/**
 * Every sink whose connector is in the working tree: CSV always; SQLite, PostgreSQL and MariaDB
 * with `connectors/sql`; SFTP with `connectors/sftp` and a loopback sshd. A service that is not
 * there is skipped with a warning, or fails the run under CI=true (requireService).
 */
export async function prepareSinks(dir: string, label: string, only?: 'csv+sqlite'): Promise<SinkSet> {
  const sinks: ChaosSink[] = [];
  const skipped: SkippedSink[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const csvDir = path.join(dir, 'csv-drop');
  sinks.push({ name: 'erp_csv', kind: 'csv', connector: { type: 'csv', options: { directory: csvDir } }, read: async (t) => readFiles(csvDir, t), close: async () => undefined });

  let sqliteFile: string | undefined;
  if (connectorExists('sql')) {
    const sqlite = await createTarget('sqlite', 'sqlite', label);
    // One file for the sink tables and the staging table, as an ERP on SQLite would have it.
    sqliteFile = String(sqlite.options['filename']);
    const s = sqlSink('erp_sqlite', 'sqlite', sqlite);
    sinks.push({ ...s, connector: { type: 'sql', options: { ...sqlite.options, staging: { claimBatch: 50, claimTimeout: 'PT5S' } } } });
    if (only) return { sinks, skipped, sqliteFile, close: async () => void (await Promise.all(sinks.map((k) => k.close().catch(() => undefined)))) };
    const pg = await probePostgres();
    if (requireService('PostgreSQL', pg)) sinks.push(sqlSink('erp_pg', 'postgres', await createTarget('postgres', pg.url, label)));
    else skipped.push({ name: 'erp_pg', reason: pg.reason ?? 'unreachable' });
    const maria = await probeMariadb();
    if (requireService('MariaDB', maria)) sinks.push(sqlSink('erp_maria', 'mariadb', await createTarget('mariadb', maria.url, label)));
    else skipped.push({ name: 'erp_maria', reason: maria.reason ?? 'unreachable' });
  } else {
    skipped.push({ name: 'sql', reason: 'connectors/sql is not in the working tree' });
  }

  if (connectorExists('sftp')) {
    const probe = probeSshd();
    if (requireService('a loopback OpenSSH sshd', probe)) {
      const sshd: SshdHandle = await startSshd();
      cleanups.push(() => sshd.stop());
      const remoteDir = path.join(sshd.root, 'drop');
      sinks.push({
        name: 'erp_sftp',
        kind: 'sftp',
        connector: {
          type: 'sftp',
          options: {
            host: sshd.host,
            port: sshd.port,
            username: sshd.username,
            password: '${CHAOS_SFTP_PASSWORD}',
            hostKeySha256: sshd.hostKeySha256,
            remoteDir,
            marker: 'manifest',
            reconnect: { attempts: 3, baseDelay: 100 },
          },
        },
        // The loopback server's folder is local: read exactly the files an ERP would fetch.
        read: async (t) => readFiles(remoteDir, t),
        close: async () => undefined,
      });
    } else skipped.push({ name: 'erp_sftp', reason: probe.reason ?? 'no sshd' });
  } else {
    skipped.push({ name: 'sftp', reason: 'connectors/sftp is not in the working tree' });
  }

  return {
    sinks,
    skipped,
    ...(sqliteFile !== undefined ? { sqliteFile } : {}),
    async close() {
      for (const sink of sinks) await sink.close().catch(() => undefined);
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    },
  };
}
