import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { reconcileApp } from '../../src/app/reconcile.js';
import type { FreightSyncConfig } from '../../src/config/types.js';
import type { ReconcileReport } from '../../src/reconcile/report.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir, withPullApp } from '../helpers/pull-harness.js';
import { availableTargets, createTarget, type SqlTarget } from '../helpers/sql-targets.js';

/**
 * Acceptance of `reconcile` (issue 12, deliverable 4): sync loads, invoices and bills from the
 * simulator into a sink, inject known differences into the sink behind the daemon's back (a load
 * row deleted, an invoice's paid amount changed, a foreign load row added), and reconcile must
 * report exactly those keys, within its request budget as the simulator counts requests;
 * `--repair` fixes them and a second reconcile reports nothing. Real sinks: the CSV drop (both API
 * variants), SQLite, PostgreSQL and MariaDB.
 */
const targets = await availableTargets();
const MAX_REQUESTS = 150;
const FOREIGN = 'FOREIGN-ERP-ROW-1';

let sim: SimulatorHandle | undefined;
const sqlTargets: SqlTarget[] = [];
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});
afterAll(async () => {
  for (const target of sqlTargets) await target.drop();
});

interface Injected {
  deletedLoad: string;
  changedInvoice: string;
}

/** The sink as the test sees it: read a table's keys, and tamper with rows. */
interface SinkHandle {
  liveKeys(table: string): Promise<string[]>;
  inject(at: string): Promise<Injected>;
}

function csvSink(out: string): SinkHandle {
  // Batch files (`<time>-<seq>-<table>.csv`); an ERP-side import file in the layout before batches is injected below.
  const files = (table: string) => fs.readdirSync(out).filter((n) => n.endsWith(`-${table}.csv`) && /^\d{8}T\d{6}Z-\d{6}-/.test(n));
  const read = (name: string) => parse(fs.readFileSync(path.join(out, name), 'utf8'), { columns: true }) as Record<string, string>[];
  const write = (name: string, rows: Record<string, string>[], columns: string[]) =>
    fs.writeFileSync(path.join(out, name), stringify(rows, { header: true, columns, record_delimiter: 'windows' }));
  const edit = (table: string, change: (rows: Record<string, string>[]) => Record<string, string>[]) => {
    for (const name of files(table)) {
      const rows = read(name);
      if (rows.length > 0) write(name, change(rows), Object.keys(rows[0]!));
    }
  };
  return {
    // The latest version of each key, as the project's own ERP-style reader sees the drop.
    async liveKeys(table) {
      return [...latestByKey(readCsvRows(out, table)).values()].filter((r) => r._op !== 'delete').map((r) => r.record_key!).sort();
    },
    async inject(at) {
      const loads = await this.liveKeys('loads');
      const invoices = await this.liveKeys('invoices');
      const deletedLoad = loads[3]!;
      const changedInvoice = invoices[2]!;
      edit('loads', (rows) => rows.filter((r) => r.record_key !== deletedLoad));
      edit('invoices', (rows) => rows.map((r) => (r.record_key === changedInvoice ? { ...r, paid_amount: '987654.32' } : r)));
      const columns = Object.keys(read(files('loads')[0]!)[0]!);
      const foreign = Object.fromEntries(columns.map((c) => [c, '']));
      write('loads__zz_erp_import.csv', [{ ...foreign, record_key: FOREIGN, reference_number: FOREIGN, _op: 'upsert', _updated_at: at, _synced_at: at }], columns);
      return { deletedLoad, changedInvoice };
    },
  };
}

function sqlSink(target: SqlTarget, prefix: string): SinkHandle {
  const table = (name: string) => target.table(`${prefix}${name}`);
  const db = target.reader;
  return {
    async liveKeys(name) {
      const rows = (await db.selectFrom(table(name)).select('record_key').where('_op', '=', 'upsert').orderBy('record_key').execute()) as { record_key: string }[];
      return rows.map((r) => String(r.record_key));
    },
    async inject(at) {
      const deletedLoad = (await this.liveKeys('loads'))[3]!;
      const changedInvoice = (await this.liveKeys('invoices'))[2]!;
      await db.deleteFrom(table('loads')).where('record_key', '=', deletedLoad).execute();
      await db.updateTable(table('invoices')).set({ paid_amount: 987654.32 }).where('record_key', '=', changedInvoice).execute();
      const stamp = target.kind === 'sqlite' ? at : new Date(at);
      await db
        .insertInto(table('loads'))
        .values({ record_key: FOREIGN, reference_number: FOREIGN, _op: 'upsert', _updated_at: stamp, _synced_at: stamp, _deleted: target.kind === 'sqlite' ? 0 : false })
        .execute();
      return { deletedLoad, changedInvoice };
    },
  };
}

const keysOf = (report: ReconcileReport, kind: string) =>
  report.results.flatMap((r) => r.differences.filter((d) => d.kind === kind).map((d) => `${r.stream}:${d.key}`)).sort();

async function reconcile(config: FreightSyncConfig, dir: string, s: SimulatorHandle, repair: boolean): Promise<ReconcileReport> {
  s.resetStats();
  const report = await withPullApp(config, dir, (app) =>
    reconcileApp(app, { from: s.options.dataStart, days: 30, maxRequests: MAX_REQUESTS, repair, signal: new AbortController().signal }),
  );
  // The budget as the server counts it: every request this reconcile made, token requests included.
  expect(s.stats().requests).toBeLessThanOrEqual(MAX_REQUESTS);
  expect(report.requests).toBe(s.stats().requests);
  return report;
}

const CASES = [
  ['csv', 'main'],
  ['sqlite', 'main'],
  ['postgres', 'main'],
  ['mariadb', 'main'],
  ['csv', 'brokerage'],
] as const;

describe.each(CASES)('reconcile against the simulator: %s sink, %s variant', (kind, variant) => {
  const url = kind === 'csv' ? 'csv' : targets[kind];
  it.skipIf(!url)('reports exactly the injected differences, --repair fixes them, a second run reports none', async () => {
    sim = await startSim({ variant, loads: 300, bills: 60, seed: 12 });
    const dir = tempDir(`reconcile-${kind}-${variant}`);
    const prefix = `rc_${kind}_`;
    let raw: Record<string, unknown> | undefined;
    let sink: SinkHandle;
    if (kind === 'csv') sink = csvSink(path.join(dir, 'out'));
    else {
      const target = await createTarget(kind, url, 'reconcile');
      sqlTargets.push(target);
      raw = { connectors: { out: { type: 'sql', options: { ...target.options, tablePrefix: prefix } } } };
      sink = sqlSink(target, prefix);
    }
    // Bills exist on the main variant only.
    const config = pullConfig({ sim, dir, streams: variant === 'main' ? ['loads', 'invoices', 'bills'] : ['loads', 'invoices'], raw });
    for (const s of await syncOnce(config, dir)) expect(s.status, `${s.stream}: ${s.error}`).toBe('ok');

    const clean = await reconcile(config, dir, sim, false);
    expect(clean.coverage.every((c) => c.complete), JSON.stringify(clean.coverage)).toBe(true);
    expect(clean.results.flatMap((r) => r.differences)).toEqual([]);
    expect(clean.results.find((r) => r.stream === 'loads')!.matching).toBeGreaterThan(100);
    const totals = clean.results.find((r) => r.stream === 'invoices')!.invoiceTotals!;
    expect(totals.length).toBeGreaterThan(0);
    expect(totals.filter((t) => t.apiTotal !== t.sinkTotal || t.apiPaid !== t.sinkPaid)).toEqual([]);

    const injected = await sink.inject(new Date(Date.parse(sim.options.dataStart) + 86_400_000).toISOString());
    const found = await reconcile(config, dir, sim, false);
    expect(keysOf(found, 'missing')).toEqual([`loads:${injected.deletedLoad}`]);
    expect(keysOf(found, 'stale')).toEqual([`invoices:${injected.changedInvoice}`]);
    expect(keysOf(found, 'extra')).toEqual([`loads:${FOREIGN}`]);
    expect(found.results.flatMap((r) => r.unchecked)).toEqual([]);
    const stale = found.results.flatMap((r) => r.differences).find((d) => d.kind === 'stale')!;
    expect(stale.detail).toContain('paid_amount: sink 987654.32');
    const invoiceTotals = found.results.find((r) => r.stream === 'invoices')!.invoiceTotals!;
    expect(invoiceTotals.filter((t) => t.apiPaid !== t.sinkPaid)).toHaveLength(1);

    const repaired = await reconcile(config, dir, sim, true);
    const outcome = repaired.results.filter((r) => r.repair).map((r) => ({ stream: r.stream, ...r.repair }));
    expect(outcome).toEqual(
      expect.arrayContaining([
        { stream: 'loads', delivered: 1, tombstones: 1, notRepaired: [] },
        { stream: 'invoices', delivered: 1, tombstones: 0, notRepaired: [] },
      ]),
    );

    const after = await reconcile(config, dir, sim, false);
    expect(after.results.flatMap((r) => r.differences)).toEqual([]);
    expect(after.coverage.every((c) => c.complete)).toBe(true);
    expect(await sink.liveKeys('loads')).toContain(injected.deletedLoad);
    expect(await sink.liveKeys('loads')).not.toContain(FOREIGN);
  });
});

it('with a budget too small for the period, the report says what was not checked', async () => {
  sim = await startSim({ variant: 'main', loads: 300, bills: 60, seed: 12 });
  const dir = tempDir('reconcile-budget');
  const config = pullConfig({ sim, dir, streams: ['loads', 'invoices', 'bills'] });
  for (const s of await syncOnce(config, dir)) expect(s.status, `${s.stream}: ${s.error}`).toBe('ok');
  sim.resetStats();
  const report = await withPullApp(config, dir, (app) =>
    reconcileApp(app, { from: sim!.options.dataStart, days: 30, maxRequests: 4, repair: false, signal: new AbortController().signal }),
  );
  expect(sim.stats().requests).toBeLessThanOrEqual(4);
  expect(report.coverage.some((c) => !c.complete)).toBe(true);
  expect(report.coverage.flatMap((c) => c.notChecked).join('\n')).toMatch(/request budget used up/);
  // Nothing unlisted is reported as missing or extra: it is unchecked.
  expect(report.results.flatMap((r) => r.differences.filter((d) => d.kind === 'extra'))).toEqual([]);
});
