import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { planStream, sqlConnector, sqlOptionsSchema } from '../connectors/sql/index.js';
import { encodeRow } from '../connectors/sql/encode-row.js';
import type { StreamPlan } from '../connectors/sql/table-plan.js';
import { createStreamMapper, loadMapping } from '../src/mapping/index.js';
import { startSimulator } from '../src/simulator/index.js';
import type { StreamMapper, SyncRecord } from '../src/contracts/index.js';
import { silentLogger } from '../src/util/logger.js';
import { recordJson } from '../src/util/record-json.js';

export interface SqlUpsertResult {
  sink: 'sqlite' | 'postgres' | 'mariadb';
  records: number;
  seconds: number;
  recordsPerSecond: number;
  /**
   * The database's floor in the same run: the same rows (mapped and encoded beforehand) written by
   * a bare driver loop — batch by batch alternating with the sink: per batch BEGIN, one multi-row upsert per table, COMMIT — into empty tables
   * of the same shape. The sink's figure includes mapping; the floor's does not (see `ratioWithoutMapping`).
   */
  bareRecordsPerSecond?: number;
  /** Sink records/s ÷ bare records/s. */
  ratio?: number;
  /**
   * Seconds of the sink's time spent in the stream mapper (records → rows, timed around each
   * `map` call): upstream of any writer, and not done by the bare loop, which is handed mapped rows.
   */
  mappingSeconds?: number;
  /** (Sink time − mapping time) ÷ bare time, as records/s: the sink against the bare loop on the same footing. */
  ratioWithoutMapping?: number;
  /** Set when the sink could not be measured (server unreachable). */
  skipped?: string;
}

export interface SqlUpsertOptions {
  records?: number;
  /** Records per batch, as the pull engine hands them to sinks (one page). */
  batchSize?: number;
  postgresUrl?: string;
  mariadbUrl?: string;
}

/**
 * Upsert throughput of the SQL sink: `records` load records (from the simulator's dataset, mapped
 * with the default `loads` mapping: ~50 columns plus a `load_stops` child table) written in
 * batches, each batch one transaction, into a fresh SQLite file, PostgreSQL schema and MariaDB
 * database. Measures `sink.write` only (mapping included, fetching excluded).
 */
export async function benchSqlUpsert(options: SqlUpsertOptions = {}): Promise<SqlUpsertResult[]> {
  const count = options.records ?? 20_000;
  const batchSize = options.batchSize ?? 50;
  const postgresUrl = options.postgresUrl ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const mariadbUrl = options.mariadbUrl ?? process.env.BENCH_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

  const sim = await startSimulator({ variant: 'main', seed: 5, loads: count });
  const records: SyncRecord[] = [];
  const syncedAt = new Date().toISOString();
  try {
    for await (const load of sim.truth('loads')) {
      records.push({ stream: 'loads', key: String(load.reference_number), op: load.isDeleted === true ? 'delete' : 'upsert', updatedAt: String(load.updatedAt), data: load, syncedAt });
    }
  } finally {
    await sim.close();
  }
  const mapping = await loadMapping('loads', undefined, { baseDir: process.cwd(), variant: 'main' });
  const name = `bench_${process.pid}_${Date.now()}`;
  const results: SqlUpsertResult[] = [];

  const mapper = createStreamMapper(mapping);
  // The sink maps inside `write`; the time of those calls is kept apart to compare like with like.
  let mappingNanos = 0n;
  const timedMapper: StreamMapper = {
    mapping: mapper.mapping,
    rawOf: (record) => mapper.rawOf(record),
    map: (batch, options) => {
      const started = process.hrtime.bigint();
      try {
        return mapper.map(batch, options);
      } finally {
        mappingNanos += process.hrtime.bigint() - started;
      }
    },
  };
  const measure = async (sink: SqlUpsertResult['sink'], raw: Record<string, unknown>, bare?: BareWriter) => {
    const open = async (tablePrefix: string) => {
      const instance = await sqlConnector.create(sqlOptionsSchema.parse({ ...raw, tablePrefix }), {
        instanceName: 'bench',
        logger: silentLogger(),
        baseDir: process.cwd(),
        mappings: new Map([['loads', timedMapper]]),
      });
      await instance.init?.(signal);
      return instance;
    };
    const signal = new AbortController().signal;
    const instance = await open('');
    let sinkNanos = 0n;
    let bareNanos = 0n;
    try {
      // Empty tables of the same shape for the bare loop (created by the connector under another prefix).
      const prefix = 'bare_';
      let plan: StreamPlan | undefined;
      if (bare) {
        await (await open(prefix)).close();
        plan = planStream(mapping, { dialect: raw.dialect as 'postgres' | 'mysql', tablePrefix: prefix, textLength: sqlOptionsSchema.parse(raw).textLength });
      }
      mappingNanos = 0n;
      // Sink and bare batches alternate, so a busy moment of the machine slows both alike.
      for (let i = 0; i < records.length; i += batchSize) {
        const slice = records.slice(i, i + batchSize);
        // The engine hashes each record before any sink sees it, which leaves its JSON text
        // (`recordJson`) for the mapper's `_raw`: done here too, off the clock.
        for (const record of slice) recordJson(record.data);
        let started = process.hrtime.bigint();
        await instance.sink!.write({ stream: 'loads', batchId: `bench-${i}`, records: slice }, signal);
        sinkNanos += process.hrtime.bigint() - started;
        if (bare && plan) {
          // Mapped and encoded off the clock, batch by batch: all 20,000 rows encoded up front
          // stayed alive through the run, and every major GC (mostly triggered by the sink's
          // garbage) marked them on the sink's clock.
          const tables = encodeBatch(slice, `bare-${i}`, mapper, plan, raw.dialect as 'postgres' | 'mysql');
          started = process.hrtime.bigint();
          await bare(tables);
          bareNanos += process.hrtime.bigint() - started;
        }
      }
    } finally {
      await instance.close();
    }
    const seconds = Number(sinkNanos) / 1e9;
    const result: SqlUpsertResult = { sink, records: records.length, seconds, recordsPerSecond: Math.round(records.length / seconds) };
    if (bare) {
      const bareRate = records.length / (Number(bareNanos) / 1e9);
      result.bareRecordsPerSecond = Math.round(bareRate);
      result.ratio = records.length / seconds / bareRate;
      result.mappingSeconds = Number(mappingNanos) / 1e9;
      result.ratioWithoutMapping = records.length / (seconds - result.mappingSeconds) / bareRate;
    }
    results.push(result);
  };

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-sql-'));
  try {
    await measure('sqlite', { dialect: 'sqlite', filename: path.join(dir, 'bench.sqlite') });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const admin = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`create schema "${name}"`);
    try {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      try {
        await measure('postgres', { dialect: 'postgres', url: postgresUrl, schema: name }, bareWriter('postgres', name, (text, values) => client.query(text, values)));
      } finally {
        await client.end();
      }
    } finally {
      await admin.query(`drop schema "${name}" cascade`);
    }
  } catch (error) {
    if (!results.some((r) => r.sink === 'postgres')) results.push({ sink: 'postgres', records: 0, seconds: 0, recordsPerSecond: 0, skipped: (error as Error).message });
  } finally {
    await admin.end().catch(() => undefined);
  }

  let maria: mysql.Connection | undefined;
  try {
    maria = await mysql.createConnection({ uri: mariadbUrl, connectTimeout: 3000 });
    await maria.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
    try {
      const connection = await mysql.createConnection({ uri: mariadbUrl, timezone: 'Z', supportBigNumbers: true, charset: 'utf8mb4' });
      try {
        await connection.query("SET SESSION sql_mode = 'STRICT_ALL_TABLES', time_zone = '+00:00'");
        await measure('mariadb', { dialect: 'mysql', url: mariadbUrl, schema: name }, bareWriter('mysql', name, (text, values) => connection.query(text, values)));
      } finally {
        await connection.end();
      }
    } finally {
      await maria.query(`drop database \`${name}\``);
    }
  } catch (error) {
    if (!results.some((r) => r.sink === 'mariadb')) results.push({ sink: 'mariadb', records: 0, seconds: 0, recordsPerSecond: 0, skipped: (error as Error).message });
  } finally {
    await maria?.end().catch(() => undefined);
  }
  return results;
}

interface BareTable {
  readonly name: string;
  readonly key: readonly string[];
  readonly columns: readonly string[];
  readonly rows: readonly Record<string, unknown>[];
}
type BareWriter = (tables: readonly BareTable[]) => Promise<void>;

/** One batch mapped and encoded exactly as the sink binds it, before the clock starts. */
function encodeBatch(records: SyncRecord[], batchId: string, mapper: StreamMapper, plan: StreamPlan, dialect: 'postgres' | 'mysql'): BareTable[] {
  const { batch } = mapper.map({ stream: 'loads', batchId, records });
  return [plan.root, ...plan.children].map((table) => {
    const rows = batch.tables.find((t) => t.table === table.logical)?.rows ?? [];
    const unique = new Map(rows.map((row) => [JSON.stringify(table.key.map((k) => row[k] ?? null)), row]));
    return {
      name: table.name,
      key: table.key,
      columns: table.columns.map((c) => c.name),
      rows: [...unique.values()].map((row) => encodeRow(row, table, dialect, row._op === 'delete' ? 'delete' : 'upsert')),
    };
  });
}

/** BEGIN; one multi-row `INSERT … ON CONFLICT DO UPDATE` (`ON DUPLICATE KEY UPDATE`) per table; COMMIT. */
function bareWriter(dialect: 'postgres' | 'mysql', schema: string, query: (text: string, values?: unknown[]) => Promise<unknown>): BareWriter {
  const q = (id: string) => (dialect === 'postgres' ? `"${id}"` : `\`${id}\``);
  return async (tables) => {
    await query('begin');
    for (const table of tables) {
      if (table.rows.length === 0) continue;
      const values: unknown[] = [];
      const tuples = table.rows.map((row) => `(${table.columns.map((c) => (values.push(row[c] ?? null), dialect === 'postgres' ? `$${values.length}` : '?')).join(', ')})`);
      const others = table.columns.filter((c) => !table.key.includes(c));
      const update =
        dialect === 'postgres'
          ? ` on conflict (${table.key.map(q).join(', ')}) do update set ${others.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`
          : ` on duplicate key update ${others.map((c) => `${q(c)} = values(${q(c)})`).join(', ')}`;
      await query(`insert into ${q(schema)}.${q(table.name)} (${table.columns.map(q).join(', ')}) values ${tuples.join(', ')}${update}`, values);
    }
    await query('commit');
  };
}
