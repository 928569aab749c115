import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';
import { probePostgres, requireService } from '../helpers/services.js';

const run = promisify(execFile);
const SCRIPT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../examples/consume-drop/apply-drop.sh');
const probe = await probePostgres();
const available = requireService('PostgreSQL (psql, jq and sha256sum on PATH too)', probe);

/**
 * The consumer example of docs/connectors.md ("How to consume the drop"), run as documented
 * against a real drop: the simulator's data synced in several batches per run (small
 * `maxBatchRows`), changed (updates, creates, deletes), synced again, and the script applied after
 * each run. The tables it rebuilds in PostgreSQL equal the simulator's truth.
 */
describe.skipIf(!available)('how to consume the drop: the documented PostgreSQL example', () => {
  let sim: SimulatorHandle;
  let admin: pg.Client;
  let db: pg.Client;
  const database = `drop_example_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: probe.url });
    await admin.connect();
    await admin.query(`create database ${database}`);
    const url = new URL(probe.url!);
    url.pathname = `/${database}`;
    db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await admin?.query(`drop database if exists ${database}`);
    await admin?.end();
    await sim?.close();
  });

  const apply = async (drop: string) => {
    const url = new URL(probe.url!);
    const env = { ...process.env, PGHOST: url.hostname, PGPORT: url.port || '5432', PGUSER: decodeURIComponent(url.username), PGDATABASE: database };
    const { stdout } = await run('bash', [SCRIPT, drop], { env });
    return stdout.split('\n').filter((line) => line.startsWith('applied '));
  };

  it('applies every batch once, in order, and rebuilds loads, stops and invoices equal to the truth', async () => {
    sim = await startSim({ variant: 'main', loads: 400, seed: 13 });
    const dir = tempDir('consume-drop');
    const drop = path.join(dir, 'out');
    // Small batches: one run publishes several, so the order of application matters.
    const config = pullConfig({ sim, dir, streams: ['loads', 'invoices'], csvOptions: { maxBatchRows: 300 } });

    await syncOnce(config, dir);
    const first = await apply(drop);
    expect(first.length).toBeGreaterThan(2);

    await sim.mutate(250);
    ageChangesPastSafetyLag(sim);
    await syncOnce(config, dir);
    const second = await apply(drop);
    expect(second.length).toBeGreaterThan(0);
    // Names sort by time: the second run's batches all come after the first run's.
    expect([...first, ...second]).toEqual([...first, ...second].sort());
    // Applied batches are never applied again.
    expect(await apply(drop)).toEqual([]);

    const loads = (await db.query('select record_key, _op, _updated_at from loads')).rows as Record<string, string>[];
    const truth = await collectTruth(sim, 'loads');
    const cmp = compareWithTruth(truth, new Map(loads.map((r) => [r.record_key!, r])), (r) => String(r.reference_number));
    expect({ missing: cmp.missing, stale: cmp.stale, wrongOp: cmp.wrongOp, phantom: cmp.phantom }).toEqual({ missing: [], stale: [], wrongOp: [], phantom: [] });
    expect(truth.some((r) => r.isDeleted === true)).toBe(true);

    // Stops: exactly the truth's routing of every live load; none for a deleted one.
    const stops = (await db.query('select record_key, count(*)::int as n from load_stops group by record_key')).rows as { record_key: string; n: number }[];
    const stopCount = new Map(stops.map((r) => [r.record_key, r.n]));
    const wrongStops = truth.filter((load) => (stopCount.get(String(load.reference_number)) ?? 0) !== (load.isDeleted === true ? 0 : ((load.driverOrder as unknown[] | undefined)?.length ?? 0)));
    expect(wrongStops.map((l) => l.reference_number)).toEqual([]);

    // Invoices and their entries: what the project's own ERP-style reader of the drop keeps.
    const latestInvoices = latestByKey(readCsvRows(drop, 'invoices'));
    const invoices = (await db.query('select record_key, _op, _updated_at from invoices order by record_key')).rows as Record<string, string>[];
    expect(invoices.map((r) => [r.record_key, r._op, r._updated_at])).toEqual(
      [...latestInvoices.values()].map((r) => [r.record_key, r._op, r._updated_at]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    const entries = (await db.query('select count(*)::int as n from invoice_entries')).rows[0] as { n: number };
    const latestEntries = readCsvRows(drop, 'invoice_entries').filter((row) => {
      const parent = latestInvoices.get(row.record_key!);
      return parent !== undefined && parent._synced_at === row._synced_at;
    });
    expect(entries.n).toBe(latestEntries.length);
  }, 120_000);
});
