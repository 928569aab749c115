import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { updateLoad } from '../../src/api/endpoints/loads.js';
import { collectStatus } from '../../src/app/stream-status.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { ageChangesPastSafetyLag, collectTruth, pullConfig, pullConfigRaw, readCsvRows, startSim, syncOnce, tempDir, withPullApp, type PullConfigOptions } from '../helpers/pull-harness.js';
import { availableTargets, createTarget, type SqlTarget, type TargetKind } from '../helpers/sql-targets.js';

/**
 * Issue 12 acceptance: a row the ERP refuses is not marked delivered. It is quarantined (state
 * database), shows in `status` and `rejected list`, the rest of its batch lands; once the cause is
 * gone, `rejected retry` — or, separately, the next run once the entry is due — delivers it, and
 * nothing is duplicated. Real simulator, real databases, the CLI in process.
 */
const targets = await availableTargets();
const LOADS = 30;

let sim: SimulatorHandle;
let victim: string;
let keys: string[];
beforeAll(async () => {
  sim = await startSim({ variant: 'main', seed: 7, loads: LOADS, customers: 5, consignees: 5, bills: 5, supportMoves: 5 });
  const truth = await collectTruth(sim, 'loads');
  keys = truth.map((l) => String(l.reference_number)).sort();
  victim = keys[Math.floor(keys.length / 2)]!;
  process.env.REJECTED_TEST_SECRET = sim.options.clientSecret;
});
afterAll(async () => sim?.close());

interface Scenario {
  dir: string;
  configFile: string;
  stateFile: string;
  options: PullConfigOptions;
}

/** A config file for the CLI and the same config for in-process runs. */
function scenario(label: string, raw: Record<string, unknown>, extra: Partial<PullConfigOptions> = {}): Scenario {
  const dir = tempDir(`rejected-${label}`);
  const options: PullConfigOptions = { sim, dir, streams: ['loads'], raw, ...extra };
  const fileConfig = pullConfigRaw(options) as { api: { auth: Record<string, unknown> } };
  fileConfig.api.auth.clientSecret = '${REJECTED_TEST_SECRET}';
  const configFile = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(configFile, stringify(fileConfig));
  return { dir, configFile, stateFile: path.join(dir, 'state.sqlite'), options };
}

const cli = async (s: Scenario, args: string[]) => {
  const run = await runCliInProcess(['--config', s.configFile, ...args]);
  return { code: run.code, json: run.stdout.trim().startsWith('[') || run.stdout.trim().startsWith('{') ? JSON.parse(run.stdout) : run.stdout };
};

function stateQuery<T>(s: Scenario, query: string, ...params: unknown[]): T[] {
  const db = new Database(s.stateFile, { readonly: true });
  try {
    return db.prepare(query).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The quarantine entry's backoff has passed (instead of waiting REDELIVERY_BASE_MS). */
function makeDue(s: Scenario): void {
  const db = new Database(s.stateFile);
  db.prepare(`update quarantine set next_attempt_at = '2000-01-01T00:00:00.000Z' where kind = 'sink'`).run();
  db.close();
}

async function expectQuarantined(s: Scenario, sink: string): Promise<void> {
  // Not remembered as delivered…
  expect(stateQuery(s, `select key from seen_records where stream = 'loads' and key = ?`, victim)).toEqual([]);
  expect(stateQuery<{ n: number }>(s, `select count(*) as n from seen_records where stream = 'loads'`)[0]!.n).toBe(LOADS - 1);
  // …but held in the one quarantine, with the record and the sink's reason.
  const listed = await cli(s, ['rejected', 'list', '--json']);
  expect(listed.code).toBe(0);
  expect(listed.json).toEqual([expect.objectContaining({ kind: 'sink', stream: 'loads', key: victim, sink, attempts: 1 })]);
  const shown = await cli(s, ['rejected', 'show', String(listed.json[0].id), '--json']);
  expect(shown.json.raw.reference_number).toBe(victim);
  // `status` counts it as rejected, not as a known (delivered) record.
  const status = await cli(s, ['status', '--json', '--offline']);
  const loads = status.json.streams.find((x: { stream: string }) => x.stream === 'loads');
  expect(loads).toMatchObject({ rejected: 1, recordsKnown: LOADS - 1, lastRun: { status: 'failed', records: LOADS - 1, rejected: 1 } });
}

describe.each(['sqlite', 'postgres', 'mariadb'] as TargetKind[])('a row the ERP table refuses, on %s', (kind) => {
  const url = targets[kind];
  let target: SqlTarget;
  beforeAll(async () => {
    if (url) target = await createTarget(kind, url, `rej_${kind}`);
  });
  afterAll(async () => target?.drop());

  const table = (prefix: string) => target.table(`${prefix}loads`);
  /** The ERP team's rule: this one reference is refused. */
  async function addRule(prefix: string): Promise<void> {
    if (kind === 'sqlite') {
      await sql.raw(`create trigger ${prefix}erp_rule before insert on ${prefix}loads when new.reference_number = '${victim}' begin select raise(abort, 'ERP rule: reference blocked'); end`).execute(target.reader);
    } else {
      await sql.raw(`alter table ${table(prefix)} add constraint ${prefix}erp_rule check (reference_number <> '${victim}')`).execute(target.reader);
    }
  }
  async function liftRule(prefix: string): Promise<void> {
    if (kind === 'sqlite') await sql.raw(`drop trigger ${prefix}erp_rule`).execute(target.reader);
    else await sql.raw(`alter table ${table(prefix)} drop constraint ${prefix}erp_rule`).execute(target.reader);
  }
  const sinkKeys = async (prefix: string) =>
    ((await target.reader.selectFrom(table(prefix)).select('reference_number').execute()) as Array<{ reference_number: string }>).map((r) => r.reference_number).sort();
  const errorRows = async (prefix: string) => (await target.reader.selectFrom(target.table(`${prefix}sync_errors`)).selectAll().execute()) as Array<Record<string, unknown>>;

  async function refuseOne(label: string, prefix: string): Promise<Scenario> {
    const s = scenario(`${kind}-${label}`, { connectors: { out: { type: 'sql', options: { ...target.options, tablePrefix: prefix } } } });
    const config = pullConfig(s.options);
    await withPullApp(config, s.dir, async () => undefined); // the connector creates its tables
    await addRule(prefix);
    const [summary] = await syncOnce(config, s.dir);
    // One rule for every rejection: the run fails, its checkpoint moves on, the rest landed.
    expect(summary).toMatchObject({ stream: 'loads', status: 'failed', delivered: LOADS - 1, rejected: 1, error: '1 record(s) rejected (see freight-sync rejected list)' });
    expect(await sinkKeys(prefix)).toEqual(keys.filter((k) => k !== victim));
    await expectQuarantined(s, 'out');
    // The ERP-side mirror lists it too.
    expect((await errorRows(prefix)).map((r) => r.record_key)).toEqual([stateQuery<{ key: string }>(s, `select item_key as key from quarantine`)[0]!.key]);

    // Not due yet: the next run does not hammer the sink with it (backoff), and does not fail.
    const [again] = await syncOnce(config, s.dir);
    expect(again).toMatchObject({ status: 'ok', delivered: 0, rejected: 0 });
    expect(stateQuery<{ attempts: number }>(s, `select attempts from quarantine`)).toEqual([{ attempts: 1 }]);
    return s;
  }

  async function expectDelivered(s: Scenario, prefix: string): Promise<void> {
    expect(await sinkKeys(prefix)).toEqual(keys);
    expect(stateQuery(s, `select * from quarantine`)).toEqual([]);
    expect(stateQuery<{ n: number }>(s, `select count(*) as n from seen_records where stream = 'loads'`)[0]!.n).toBe(LOADS);
    expect(await errorRows(prefix)).toEqual([]);
    // Delivered records are remembered: one more pass writes nothing.
    const [after] = await syncOnce(pullConfig(s.options), s.dir);
    expect(after).toMatchObject({ status: 'ok', delivered: 0, rejected: 0 });
    expect(await sinkKeys(prefix)).toEqual(keys);
  }

  it.skipIf(!url)('is quarantined, not marked delivered; `rejected retry` delivers it once the rule is lifted', async () => {
    const prefix = 'r1_';
    const s = await refuseOne('retry', prefix);
    const refused = await cli(s, ['rejected', 'retry', '--all', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.json).toEqual([expect.objectContaining({ key: victim, sink: 'out', result: 'rejected' })]);
    expect(refused.json[0].reason).toContain(`stream loads, key ${victim}, table ${prefix}loads`);
    expect(stateQuery<{ attempts: number }>(s, `select attempts from quarantine`)).toEqual([{ attempts: 2 }]);

    await liftRule(prefix);
    const retried = await cli(s, ['rejected', 'retry', '--stream', 'loads', '--json']);
    expect(retried.code).toBe(0);
    expect(retried.json).toEqual([expect.objectContaining({ kind: 'sink', key: victim, sink: 'out', result: 'delivered', reason: null })]);
    await expectDelivered(s, prefix);
  });

  it.skipIf(!url)('the next run delivers it once its entry is due and the rule is lifted', async () => {
    const prefix = 'r2_';
    const s = await refuseOne('next-run', prefix);
    await liftRule(prefix);
    makeDue(s);
    const [summary] = await syncOnce(pullConfig(s.options), s.dir);
    expect(summary).toMatchObject({ status: 'ok', delivered: 1, rejected: 0 });
    await expectDelivered(s, prefix);
  });
});

describe('a record the CSV drop cannot map', () => {
  it('is quarantined, and delivered by `rejected retry` once the mapping can hold it; one row per key in the drop', async () => {
    const latin1 = scenario('csv', {}, { csvOptions: { encoding: 'latin1' } });
    // The API sends text latin1 cannot hold in one load.
    await withPullApp(pullConfig(latin1.options), latin1.dir, (app) => updateLoad(app.client, victim, { containerNo: 'КОНТ-中' }));
    ageChangesPastSafetyLag(sim);
    const [summary] = await syncOnce(pullConfig(latin1.options), latin1.dir);
    expect(summary).toMatchObject({ status: 'failed', delivered: LOADS - 1, rejected: 1 });
    const out = path.join(latin1.dir, 'out');
    const dropped = () => readCsvRows(out, 'loads');
    expect((await dropped()).map((r) => r.reference_number).sort()).toEqual(keys.filter((k) => k !== victim));
    expect(fs.readdirSync(out).filter((n) => n.includes('errors'))).toEqual([]);
    await expectQuarantined(latin1, 'out');
    const [entry] = (await cli(latin1, ['rejected', 'list', '--json'])).json;
    expect(entry.reason).toContain('cannot be encoded in latin1');

    // The ERP side switches the drop to UTF-8 (same folder, same state): the retry now lands.
    const utf8 = { ...latin1, options: { ...latin1.options, csvOptions: { encoding: 'utf8' } } };
    const fileConfig = pullConfigRaw(utf8.options) as { api: { auth: Record<string, unknown> } };
    fileConfig.api.auth.clientSecret = '${REJECTED_TEST_SECRET}';
    fs.writeFileSync(utf8.configFile, stringify(fileConfig));
    const retried = await cli(utf8, ['rejected', 'retry', String(entry.id), '--json']);
    expect(retried).toEqual({ code: 0, json: [expect.objectContaining({ id: entry.id, result: 'delivered' })] });
    const rows = await dropped();
    expect(rows.filter((r) => r.reference_number === victim).map((r) => r.container_no)).toEqual(['КОНТ-中']);
    expect(rows).toHaveLength(LOADS);
    expect(new Set(rows.map((r) => r.reference_number)).size).toBe(LOADS);
    expect(stateQuery(utf8, `select * from quarantine`)).toEqual([]);
    const [after] = await syncOnce(pullConfig(utf8.options), utf8.dir);
    expect(after).toMatchObject({ status: 'ok', delivered: 0, rejected: 0 });
    expect(await dropped()).toHaveLength(LOADS);
  });
});
