import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { openStateDatabase } from '../../src/state/database.js';
import { LeaseStore } from '../../src/state/leases/index.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { StateDialect } from '../../src/state/db-clock.js';
import { exitWithin, startCli, type CliChild } from '../chaos/daemon-process.js';
import { dropPostgresSchema, freshStateOn, postgresUrlForTests, type FreshState } from '../helpers/state-db.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, issuePair, latestByKey, pullConfigRaw, readCsvRows, startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * Issue 11 item 6: `sync` and `backfill` beside a running `run` daemon on one state, SQLite and
 * PostgreSQL (real processes of the built CLI). The sync asks the daemon for the account; the daemon drains its work and hands
 * the lease over; the sync works under the lease; the daemon claims it back afterwards and goes
 * on. No stream run of the one overlaps a stream run of the other, the checkpoint never moves
 * backwards, the sink matches the API exactly, and — on brokerage with a bare token pair, whose
 * refresh rotates it — no rotated-away refresh token is ever used. A one-shot that does not get
 * the lease within `--lease-wait` refuses, naming the holder.
 */
const children: CliChild[] = [];
const sims: SimulatorHandle[] = [];
const states: FreshState[] = [];
const host = os.hostname();
const hasPostgres = (await postgresUrlForTests()) !== undefined;

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await c.exited;
  }
  for (const sim of sims.splice(0)) await sim.close();
  for (const state of states.splice(0)) await state.dispose();
});

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface RunRow {
  command: string;
  started_at: string;
  finished_at: string | null;
  status: string;
}

async function deployment(variant: 'main' | 'brokerage', barePair: boolean, prefix: string, dialect?: StateDialect, account?: string) {
  // Brokerage access tokens live 2 s: both processes refresh (and so rotate the pair) often.
  const sim = await startSim({ variant, loads: 150, ...(variant === 'brokerage' ? { accessTokenTtlMs: 2_000 } : {}) });
  sims.push(sim);
  const dir = tempDir(prefix);
  // Small pages: a backfill of everything takes many requests (and, on brokerage, several refreshes).
  const raw = pullConfigRaw({ sim, dir, streams: ['loads'], streamSettings: { schedule: '*/1 * * * * *', pageSize: 10 } }) as Record<string, any>;
  if (barePair) raw['api'].auth = await issuePair(sim);
  raw['api'].refreshBeforeExpiry = 'PT0.5S';
  raw['log'] = { level: 'info' };
  raw['http'] = { enabled: false };
  raw['cluster'] = { leaseTtl: 'PT3S', claimInterval: 'PT0.5S', heartbeat: 'PT1S' };
  // A state of its own that the test reads beside the processes (else the config's file in `dir`).
  const state = dialect ? await freshStateOn(dialect) : undefined;
  if (state) states.push(state);
  if (state?.location.kind === 'sqlite') raw['state'] = { path: state.location.path };
  if (state?.location.kind === 'postgres') raw['state'] = { url: state.location.url, schema: state.location.schema, poolSize: 4 };
  // A config with `accounts` (of one): the account's state in a schema of its own, its lease in the shared one.
  const config = account ? { ...pick(raw, ['state', 'log', 'http', 'cluster']), accounts: [{ name: account, ...pick(raw, ['api', 'sync', 'connectors']) }] } : raw;
  const file = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(file, stringify(config));
  const accountDb = state && account ? state.db.withSchema(`${(state.location as { schema: string }).schema}_${account}`) : state?.db;
  if (state?.location.kind === 'postgres' && account) {
    const { url, schema } = state.location;
    states.push({ ...state, dispose: () => dropPostgresSchema(url, `${schema}_${account}`) });
  }
  return { sim, dir, file, state, accountDb, accountArgs: account ? ['--account', account] : [], statePath: path.join(dir, 'state.sqlite'), log: path.join(dir, 'processes.log') };
}

function pick(raw: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in raw).map((k) => [k, raw[k]]));
}

function cli(args: string[], where: { dir: string; log: string }): CliChild {
  const child = startCli(args, { env: {}, logFile: where.log, cwd: where.dir });
  children.push(child);
  return child;
}

describe.each([
  { dialect: 'sqlite' as const, variant: 'main' as const, barePair: false, skip: false },
  { dialect: 'sqlite' as const, variant: 'brokerage' as const, barePair: true, skip: false },
  { dialect: 'postgres' as const, variant: 'main' as const, barePair: false, skip: !hasPostgres },
  { dialect: 'postgres' as const, variant: 'brokerage' as const, barePair: true, skip: !hasPostgres },
  { dialect: 'postgres' as const, variant: 'main' as const, barePair: false, skip: !hasPostgres, account: 'acme' },
])('sync and backfill beside a run daemon on $dialect ($variant, bare token pair: $barePair, account: $account)', ({ dialect, variant, barePair, skip, account }) => {
  it.skipIf(skip)('the daemon hands the account over to a sync, then to a backfill; each works alone; the daemon resumes; sink exact', async () => {
    const d = await deployment(variant, barePair, 'sync-beside-run', dialect, account);
    const db = d.accountDb!;
    const daemon = cli(['run', '-c', d.file], d);
    await until(() => daemon.output().includes('daemon running'), 'the daemon to run');
    let runRows: RunRow[] = [];
    const runs = () => runRows;
    const readRuns = async () => {
      runRows = await db.selectFrom('runs').select(['command', 'started_at', 'finished_at', 'status']).where('stream', '=', 'loads').orderBy('id').execute();
      return runRows;
    };
    // The checkpoint's high-water mark, sampled all along (with the runs): it never moves backwards.
    const highWaters: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const row = await db.selectFrom('checkpoints').select('cursor').where('stream', '=', 'loads').executeTakeFirst();
        const mark = row ? (JSON.parse(row.cursor) as { highWater?: unknown }).highWater : undefined;
        if (typeof mark === 'string') highWaters.push(mark);
        await readRuns();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await until(() => runs().some((r) => r.command === 'run' && r.status === 'ok'), 'a first pass of the daemon');

      // Not willing to wait: refused at once, naming the daemon; the daemon is not disturbed.
      const impatient = cli(['sync', '-c', d.file, ...d.accountArgs, '--lease-wait', 'PT0S'], d);
      const refused = await exitWithin(impatient, 60_000);
      expect(refused.code, impatient.output()).toBe(1);
      expect(impatient.output()).toContain(`is held by run on ${host}:${daemon.child.pid}`);
      expect(impatient.output()).toMatch(/epoch \d+, held until \d{4}-/);
      expect(daemon.output()).not.toContain('over to sync');

      await d.sim.mutate(40);
      const sync = cli(['sync', '-c', d.file, ...d.accountArgs, '--log-level', 'info'], d);
      const exit = await exitWithin(sync, 90_000);
      const syncEndedAt = new Date().toISOString();
      expect(exit.code, sync.output().slice(-3000)).toBe(0);
      expect(sync.output()).toContain(`waiting for run on ${host}:${daemon.child.pid}`);
      expect(daemon.output()).toContain(`over to sync on ${host}:${sync.child.pid}`);

      // The daemon claims the account back and passes again.
      await until(() => runs().some((r) => r.command === 'run' && r.status === 'ok' && r.started_at > syncEndedAt), 'a pass of the daemon after the sync');

      // A backfill of everything, slowed down at the API so that it spans several access-token
      // lifetimes: it refreshes (brokerage: rotates the pair) while the daemon waits in standby.
      d.sim.configure({ pageDelayMs: 100 });
      const tokensBefore = d.sim.stats().tokensIssued;
      const backfill = cli(['backfill', '-c', d.file, ...d.accountArgs, '--from', d.sim.options.dataStart, '--log-level', 'info'], d);
      const backfilled = await exitWithin(backfill, 120_000);
      const backfillEndedAt = new Date().toISOString();
      d.sim.configure({ pageDelayMs: 0 });
      expect(backfilled.code, backfill.output().slice(-3000)).toBe(0);
      expect(daemon.output()).toContain(`over to backfill on ${host}:${backfill.child.pid}`);
      if (variant === 'brokerage') expect(d.sim.stats().tokensIssued, 'refreshes during the backfill').toBeGreaterThan(tokensBefore);
      await until(() => runs().some((r) => r.command === 'run' && r.status === 'ok' && r.started_at > backfillEndedAt), 'a pass of the daemon after the backfill');

      // The one-shots' passes and the daemon's never overlapped.
      const all = await readRuns();
      const oneShotRuns = all.filter((r) => r.command === 'sync' || r.command === 'backfill');
      expect(oneShotRuns.map((r) => r.command)).toEqual(['sync', 'backfill']);
      for (const s of oneShotRuns) {
        expect(s.status).toBe('ok');
        const overlapping = all.filter((r) => r.command === 'run' && r.started_at < s.finished_at! && (r.finished_at === null || r.finished_at > s.started_at));
        expect(overlapping, `daemon passes during the ${s.command} ${s.started_at}–${s.finished_at}`).toEqual([]);
      }
      expect(highWaters.length).toBeGreaterThan(0);
      for (let i = 1; i < highWaters.length; i++) expect(highWaters[i]! >= highWaters[i - 1]!, `high-water ${highWaters[i]} after ${highWaters[i - 1]}`).toBe(true);

      // Sink exact: every change old enough for the next pass, then one more pass of the daemon.
      ageChangesPastSafetyLag(d.sim);
      const agedAt = new Date().toISOString();
      await until(() => runs().some((r) => r.command === 'run' && r.status === 'ok' && r.started_at > agedAt), 'a pass after the changes aged');
      const truth = await collectTruth(d.sim, 'loads');
      const cmp = compareWithTruth(truth, latestByKey(readCsvRows(path.join(d.dir, 'out'), 'loads')), (r) => String(r.reference_number));
      expect({ missing: cmp.missing.length, stale: cmp.stale.length, phantom: cmp.phantom.length }).toEqual({ missing: 0, stale: 0, phantom: 0 });

      daemon.child.kill('SIGTERM');
      expect((await exitWithin(daemon, 60_000)).code).toBe(0);
      expect(daemon.output()).not.toContain('reauth_required');
      expect(d.sim.stats().retiredRefreshTokenUses).toBe(0);
    } finally {
      sampling = false;
      await sampler;
    }
  }, 240_000);
});

describe('a run daemon started while a backfill works the account (SQLite)', () => {
  it('leaves the backfill\'s lease alone, and starts its work once the backfill released it', async () => {
    const d = await deployment('main', false, 'run-after-backfill');
    const first = cli(['sync', '-c', d.file], d);
    expect((await exitWithin(first, 60_000)).code, first.output()).toBe(0);
    const db = openStateDatabase(d.statePath);
    try {
      const leases = new LeaseStore(db);
      // A slow backfill (the API answers every page after 2 s) until the daemon is up.
      d.sim.configure({ pageDelayMs: 2_000 });
      const backfill = cli(['backfill', '-c', d.file, '--from', d.sim.options.dataStart, '--log-level', 'info'], d);
      await until(async () => (await leases.live())[0]?.holderCommand === 'backfill', 'the backfill to hold the lease');
      const daemon = cli(['run', '-c', d.file], d);
      await until(() => daemon.output().includes('daemon running'), 'the daemon to run');
      expect(daemon.output()).toContain(`is worked by backfill on ${host}:${backfill.child.pid}`);
      expect(daemon.output()).toContain('standby');
      expect(backfill.child.exitCode).toBeNull();
      d.sim.configure({ pageDelayMs: 0 });
      const exit = await exitWithin(backfill, 120_000);
      expect(exit.code, backfill.output().slice(-3000)).toBe(0);
      const backfillEndedAt = new Date().toISOString();
      await until(async () => (await db.selectFrom('runs').select('id').where('command', '=', 'run').where('status', '=', 'ok').where('started_at', '>', backfillEndedAt).execute()).length > 0, 'a pass of the daemon after the backfill');
      const all = await db.selectFrom('runs').select(['command', 'started_at', 'finished_at']).orderBy('id').execute();
      const b = all.find((r) => r.command === 'backfill')!;
      expect(all.filter((r) => r.command === 'run' && r.started_at < b.finished_at!)).toEqual([]);
      daemon.child.kill('SIGTERM');
      expect((await exitWithin(daemon, 60_000)).code).toBe(0);
    } finally {
      await db.destroy();
    }
  }, 180_000);
});

describe('a one-shot holding the account', () => {
  it('another sync waits --lease-wait, then refuses naming it, and withdraws its request', async () => {
    const d = await deployment('main', false, 'sync-refused');
    // A first sync creates the state and the account's lease row (released at its end).
    const first = cli(['sync', '-c', d.file], d);
    expect((await exitWithin(first, 60_000)).code, first.output()).toBe(0);
    const db = openStateDatabase(d.statePath);
    try {
      const leases = new LeaseStore(db);
      const [row] = await leases.list();
      expect(row).toMatchObject({ holder: null, holderCommand: null });
      // A backfill on another host holds it (it does not hand over: it finishes first).
      const [held] = await leases.claim([row!.account], { holder: 'otherhost:4242:beef', ttlMs: 120_000, command: 'backfill' });
      const second = cli(['sync', '-c', d.file, '--lease-wait', 'PT1S', '--log-level', 'info'], d);
      const exit = await exitWithin(second, 60_000);
      expect(exit.code, second.output()).toBe(1);
      expect(second.output()).toContain('waiting for backfill on otherhost:4242');
      expect(second.output()).toContain(`is held by backfill on otherhost:4242 (holder otherhost:4242:beef, epoch ${held!.epoch}, held until`);
      expect(second.output()).toContain('gave up after waiting PT1S (--lease-wait)');
      expect((await leases.row(row!.account))!.request).toBeUndefined();

      // status names the one-shot working the account; reset refuses while it does.
      const status = cli(['status', '-c', d.file, '--offline'], d);
      expect((await exitWithin(status, 60_000)).code, status.output()).toBe(0);
      expect(status.output()).toContain('worked by backfill on otherhost:4242 (holder otherhost:4242:beef');
      const statusJson = cli(['status', '-c', d.file, '--offline', '--json'], d);
      expect((await exitWithin(statusJson, 60_000)).code).toBe(0);
      expect(JSON.parse(statusJson.output()).lease).toMatchObject({ holder: 'otherhost:4242:beef', command: 'backfill', request: null });
      const reset = cli(['reset', '-c', d.file, '--stream', 'loads', '--to', '2025-01-01'], d);
      expect((await exitWithin(reset, 60_000)).code).toBe(1);
      expect(reset.output()).toContain('host otherhost, pid 4242, running since backfill, lease epoch');
      // The refusal wrote nothing: only the first sync's runs.
      expect((await db.selectFrom('runs').select('command').execute()).every((r) => r.command === 'sync')).toBe(true);
      expect(await db.selectFrom('runs').select('id').execute()).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  }, 120_000);
});
