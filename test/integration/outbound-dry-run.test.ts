import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { FreightSyncConfig } from '../../src/config/types.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { copyBadInputCorpus, readCsvRows, resultsOf } from '../helpers/outbound-corpus.js';
import { csvKey, insertStagingCreates, readStaging, sqlKey, writeCreatesCsv } from '../helpers/outbound-fixtures.js';
import { dryRun, loadsByErpKey, outboundConfig, outboundConfigRaw, push, syncDirectory } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

const WRITE = /^(POST|PUT|PATCH|DELETE) /;

/** API calls that change something (the token request is authentication, not a write). */
function writeCalls(sim: SimulatorHandle): number {
  let n = 0;
  for (const [route, byStatus] of Object.entries(sim.stats().byRoute)) {
    if (WRITE.test(route) && route !== 'POST /retrieve-token') n += Object.values(byStatus).reduce((a, b) => a + b, 0);
  }
  return n;
}

/** Every file under `dir` with a hash of its content: proves nothing was moved, changed or added. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, file)] = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  }
  return out;
}

/** Rows of the outbound tables of the state database (all must stay empty through a dry run). */
function outboxRows(dir: string): number {
  const db = new Database(path.join(dir, 'state.sqlite'), { readonly: true });
  try {
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return count('outbox') + count('outbox_units') + count('outbox_inbound');
  } finally {
    db.close();
  }
}

const dryRunFile = (inbox: string, name: string) => path.join(inbox, `${name}.dry-run.result.csv`);

/**
 * `push --dry-run` (issue 15, deliverable 5): the real intake's answers for every request with
 * nothing sent, no file moved, no staging row claimed and the state database unchanged.
 */
describe('push --dry-run', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ loads: 100, customers: 10, consignees: 5 });
  });
  afterAll(async () => sim.close());

  function inboxConfig(dir: string, extra: Record<string, unknown> = {}, sources = ['erp_inbox']): FreightSyncConfig {
    return outboundConfig({
      sim,
      dir,
      connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox', pattern: ['*.csv', '*.json'] } }, ...extra },
      outbound: { sources },
    });
  }

  it('over the bad-input corpus writes the same errors as a real push and sends nothing', async () => {
    const dir = tempDir('dry-run-bad');
    const inbox = path.join(dir, 'inbox');
    const config = inboxConfig(dir);
    await syncDirectory(config, dir);
    const files = copyBadInputCorpus(inbox);
    const before = tree(inbox);
    const requestsBefore = sim.stats().requests;
    const writesBefore = writeCalls(sim);

    const summary = await dryRun(config, dir);
    expect(summary.sourceErrors).toEqual([]);
    expect(summary.units).toBe(8);
    expect(summary.unitsWrittenBack).toBe(8);
    expect(summary.failed).toBeGreaterThan(20);
    // Nothing sent (not even a read: intake needs none), nothing taken, nothing stored.
    expect(writeCalls(sim)).toBe(writesBefore);
    expect(sim.stats().requests).toBe(requestsBefore);
    const after = tree(inbox);
    for (const name of files) expect(after[name], name).toBe(before[name]);
    expect(Object.keys(after).sort()).toEqual([...Object.keys(before), ...files.map((f) => `${f}.dry-run.result.csv`)].sort());
    expect(outboxRows(dir)).toBe(0);

    const dry = new Map(files.map((f) => [f, readCsvRows(dryRunFile(inbox, f))]));
    for (const rows of dry.values()) for (const row of rows) expect(row['dry_run']).toBe('true');
    expect(dry.get('unknown-caller.csv')![0]).toMatchObject({
      status: 'failed',
      outcome: 'error',
      error: 'caller: unknown customer code "ACME-9" (not among 15 synced customers; is the customers stream enabled?)',
    });
    expect(dry.get('duplicate-keys.csv')!.map((r) => r['outcome'])).toEqual(['would create load', 'would create load (duplicate of ref 2: sent once)', 'error']);
    expect(dry.get('bad-enums.csv')![4]).toMatchObject({ status: 'ok', outcome: 'would create load' });
    // The table's rows as the CLI prints them carry the ERP's key and kind.
    expect(summary.results.find((r) => r.erpKey === 'OK-E-1')).toMatchObject({ kind: 'create', status: 'ok', outcome: 'would create load' });
    expect(summary.results.find((r) => r.erpKey === 'BAD-E-8')).toMatchObject({ kind: 'frobnicate', status: 'failed', outcome: 'error' });

    // The real push afterwards: every request has the outcome the dry run announced, errors word for word.
    const pushed = await push(config, dir);
    expect(pushed.units).toBe(8);
    for (const file of files) {
      const real = resultsOf(inbox, file);
      const announced = dry.get(file)!;
      expect(announced.map((r) => r['ref']), file).toEqual(real.map((r) => r['ref']));
      expect(
        announced.map((r) => [r['status'] === 'ok' ? 'done' : 'failed', r['error']]),
        file,
      ).toEqual(real.map((r) => [r['status'], r['error']]));
      // Taking the file removed its dry-run result: it described a run that sent nothing.
      expect(fs.existsSync(dryRunFile(inbox, file)), file).toBe(false);
    }
  });

  it('says "would create" for a good file and stores nothing, so the push afterwards creates every load once', async () => {
    const dir = tempDir('dry-run-good');
    const inbox = path.join(dir, 'inbox');
    const erpDb = path.join(dir, 'erp.sqlite');
    const config = inboxConfig(dir, { erp_sql: { type: 'sql', options: { dialect: 'sqlite', filename: 'erp.sqlite', staging: { claimBatch: 4 } } } }, ['erp_inbox', 'erp_sql']);
    await syncDirectory(config, dir); // also creates the staging table
    writeCreatesCsv(path.join(inbox, 'orders.csv'), 20);
    insertStagingCreates(erpDb, 10);
    const before = tree(inbox);
    const writesBefore = writeCalls(sim);

    const first = await dryRun(config, dir);
    expect(first.sourceErrors).toEqual([]);
    expect(first.failed).toBe(0);
    const fromFile = first.results.filter((r) => r.source === 'erp_inbox');
    expect(fromFile).toHaveLength(23);
    expect(fromFile.slice(0, 20).map((r) => r.outcome)).toEqual(Array(20).fill('would create load'));
    expect(fromFile.slice(20).map((r) => r.outcome)).toEqual([
      `would change the status of load erp_key ${csvKey(10)} to AVAILABLE`,
      `would change the status of load erp_key ${csvKey(20)} to AVAILABLE`,
      `would change the status of load erp_key ${csvKey(20)} to PENDING`,
    ]);
    // Staging rows: reported in units of claimBatch, left exactly as they were (nothing written to them).
    const fromTable = first.results.filter((r) => r.source === 'erp_sql');
    expect(fromTable.map((r) => r.outcome)).toEqual([...Array(10).fill('would create load'), `would change the status of load erp_key ${sqlKey(10)} to AVAILABLE`]);
    expect(new Set(fromTable.map((r) => r.unitId))).toEqual(new Set(['peek-1-4', 'peek-5-8', 'peek-9-11']));
    expect(readStaging(erpDb).map((r) => [r.status, r.reference_number, r.error])).toEqual(Array(11).fill(['new', null, null]));
    expect(first.unitsWrittenBack).toBe(1);
    expect(writeCalls(sim)).toBe(writesBefore);
    expect(outboxRows(dir)).toBe(0);
    expect(readCsvRows(dryRunFile(inbox, 'orders.csv')).map((r) => r['outcome'])).toEqual(fromFile.map((r) => r.outcome));

    // Nothing was remembered: a second dry run gives the same answers (not "already queued").
    const second = await dryRun(config, dir);
    expect(second.results.map((r) => [r.ref, r.status, r.outcome])).toEqual(first.results.map((r) => [r.ref, r.status, r.outcome]));
    expect(tree(inbox)['orders.csv']).toBe(before['orders.csv']);

    // A push claims one batch of staging rows: three pushes take the three units the dry run showed.
    for (let pass = 1; pass <= 3; pass++) {
      const pushed = await push(config, dir);
      expect(pushed.invalid).toBe(0);
      expect(pushed.dead).toBe(0);
    }
    expect(readStaging(erpDb).every((r) => r.status === 'done')).toBe(true);
    const keys = [...Array.from({ length: 20 }, (_, i) => csvKey(i + 1)), ...Array.from({ length: 10 }, (_, i) => sqlKey(i + 1))];
    const truth = await loadsByErpKey(sim, keys);
    for (const key of keys) expect(truth.get(key)?.length, key).toBe(1);
    expect(resultsOf(inbox, 'orders.csv').every((r) => r['status'] === 'done')).toBe(true);
    expect(fs.existsSync(dryRunFile(inbox, 'orders.csv'))).toBe(false);

    // The same file dropped again: a dry run says the push would only link it to what is done.
    const writesAfterPush = writeCalls(sim);
    fs.copyFileSync(path.join(inbox, 'processed', 'orders.csv'), path.join(inbox, 'orders-again.csv'));
    const again = await dryRun(config, dir);
    const repeated = again.results.filter((r) => r.source === 'erp_inbox');
    expect(repeated[0]).toMatchObject({ status: 'ok', referenceNumber: truth.get(csvKey(1))![0]!['reference_number'] });
    expect(repeated.slice(0, 21).every((r) => /^already done \(outbox #\d+\)$/.test(r.outcome))).toBe(true);
    // CSV-00020's AVAILABLE differs from its newest status (PENDING): intake makes it a new revision (and then PENDING
    // another one), so a push would send both again — the dry run says so.
    expect(repeated.slice(21).map((r) => r.outcome)).toEqual([
      `would change the status of load erp_key ${csvKey(20)} to AVAILABLE`,
      `would change the status of load erp_key ${csvKey(20)} to PENDING`,
    ]);
    expect(writeCalls(sim)).toBe(writesAfterPush);
  });

  it('freight-sync push --dry-run prints a line per request (table or --json) and exits 1 when any would be rejected', async () => {
    const dir = tempDir('dry-run-cli');
    const inbox = path.join(dir, 'inbox');
    const options = { sim, dir, connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox' } } }, outbound: { sources: ['erp_inbox'] } };
    await syncDirectory(outboundConfig(options), dir);
    const raw = outboundConfigRaw(options) as { api: { auth: Record<string, unknown> } };
    // Secrets only through the environment in a config file.
    process.env.DRY_RUN_TEST_SECRET = sim.options.clientSecret;
    raw.api.auth.clientSecret = '${DRY_RUN_TEST_SECRET}';
    const configFile = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(configFile, stringify(raw));
    fs.writeFileSync(path.join(inbox, 'orders.csv'), 'erp_key,kind,type_of_load,preSetOrderStatus,caller,shipper\r\nCLI-1,create,IMPORT,,CUS000001,CUS000002\r\nCLI-2,create,IMPRT,,CUS000001,CUS000002\r\n');
    const writesBefore = writeCalls(sim);

    const table = await runCliInProcess(['--config', configFile, 'push', '--dry-run']);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/erp_inbox .*orders\.csv\s+2\s+CLI-1\s+create\s+would create load/);
    expect(table.stdout).toContain('error type_of_load: "IMPRT" is not one of IMPORT, EXPORT, ROAD, BILL_ONLY (did you mean IMPORT?)');
    expect(table.stdout).toContain('1 unit(s), 2 request(s): 1 ok, 1 failed');

    const json = await runCliInProcess(['--config', configFile, 'push', '--dry-run', '--json']);
    expect(json.code).toBe(1);
    const summary = JSON.parse(json.stdout) as { results: Array<{ erpKey: string; status: string; outcome: string }> };
    expect(summary.results.map((r) => [r.erpKey, r.status, r.outcome])).toEqual([
      ['CLI-1', 'ok', 'would create load'],
      ['CLI-2', 'failed', 'error'],
    ]);
    expect(writeCalls(sim)).toBe(writesBefore);
    expect(fs.readdirSync(inbox).sort()).toEqual(['failed', 'orders.csv', 'orders.csv.dry-run.result.csv', 'processed', 'processing']);
  });
});
