import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ApiClient } from '../../src/api/api-client.js';
import { listLoads } from '../../src/api/endpoints/loads.js';
import { openState } from '../../src/state/database.js';
import type { StateLocation } from '../../src/state/state-location.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { runCli } from '../helpers/cli-process.js';
import { startSim, tempDir, issuePair } from '../helpers/pull-harness.js';
import { dropPostgresSchema, postgresStateLocation, postgresUrlForTests, stateDialects } from '../helpers/state-db.js';

/**
 * Issue 11 (single-process safety of tokens): on brokerage every refresh rotates the refresh token
 * and the old one dies at once. Two processes sharing one state store must never both refresh
 * with the same token — the second would present a dead one and, with only a token pair
 * configured, be locked out for good. They serialise through the store's refresh lock and adopt
 * what the other stored.
 */
let sim: SimulatorHandle | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const DIALECTS = await stateDialects();
const POSTGRES = await postgresUrlForTests();
/**
 * A replica stopped (`SIGSTOP`, a frozen VM) inside a refresh, on another host: nobody may take
 * its refresh lock over before the deadline. A brokerage account with client credentials need not
 * wait for it: its refresh is `POST /retrieve-token`, which returns the valid refresh token rather
 * than replacing it (spec §5 item 5), so after the patience it goes ahead without the lock.
 */
const STUCK_HOLDER = '4242:stopped-replica:another-host';

describe('tokens shared by several processes through the state store', () => {
  it.each(DIALECTS)('brokerage: two clients on one %s state refresh one at a time and never use a rotated-away refresh token', async (dialect) => {
    sim = await startSim({ variant: 'brokerage', loads: 600, accessTokenTtlMs: 5_000 });
    const credentials = await issuePair(sim);
    const location: StateLocation =
      dialect === 'postgres' ? postgresStateLocation(POSTGRES!) : { kind: 'sqlite', path: path.join(tempDir('token-shared'), 'state.sqlite') };
    if (location.kind === 'postgres') cleanups.push(() => dropPostgresSchema(location.url, location.schema));
    // Two connections to one store, as two processes would have; each client has its own token
    // manager. (Migrated one after the other: in one thread, a synchronous SQLite driver waiting
    // for the other connection's migration lock would block the event loop that must release it.)
    const migrated = await openState(location);
    await migrateToLatest(migrated);
    await migrated.destroy();
    const opened = await Promise.all([0, 1].map(async () => {
      const db = await openState(location);
      const client = new ApiClient({
        baseUrl: sim!.baseUrl,
        variant: 'brokerage',
        credentials,
        tokenStore: new SqlTokenStore(db),
        logger: silentLogger(),
        rateLimit: { requestsPerSecond: 500, maxInFlight: 2, adaptive: false },
        retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxElapsedMs: 10_000 },
      });
      return { db, client };
    }));
    try {
      for (let round = 0; round < 12; round++) {
        // Both access tokens are expired at once: both processes want to refresh now.
        sim.advance(6_000);
        const pages = await Promise.all(opened.map(({ client }, i) => listLoads(client, { skip: (round * 2 + i) * 10, limit: 10, sortBy: 'asc' })));
        for (const page of pages) expect(page.items.length).toBe(10);
      }
      const rotations = opened.reduce((n, o) => n + o.client.tokens.refreshCount, 0);
      const adopted = opened.reduce((n, o) => n + o.client.tokens.adoptedFromStore, 0);
      expect(sim.stats().byRoute['GET /generate-new-token']?.['401'] ?? 0).toBe(0);
      expect(sim.stats().retiredRefreshTokenUses).toBe(0);
      // One rotation per expiry, the other process adopted it (not a rotation each).
      expect(rotations).toBe(12);
      expect(adopted).toBe(12);
    } finally {
      for (const { db, client } of opened) {
        client.close();
        await db.destroy();
      }
    }
  }, 60_000);

  it.each(DIALECTS)('brokerage with a token pair: `run` beside concurrent `sync` and `backfill` on one %s state is never locked out', async (dialect) => {
    const state = dialect === 'postgres' ? { url: POSTGRES!, schema: postgresStateLocation(POSTGRES!).schema } : { path: './state.sqlite' };
    if (dialect === 'postgres') cleanups.push(() => dropPostgresSchema(POSTGRES!, (state as { schema: string }).schema));
    sim = await startSim({ variant: 'brokerage', loads: 3_000, accessTokenTtlMs: 20_000, pageDelayMs: 20 });
    const handle = sim;
    const pair = await issuePair(handle);
    const dir = tempDir('token-run-backfill');
    const config = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(
      config,
      stringify({
        api: { variant: 'brokerage', baseUrl: handle.baseUrl, auth: { accessToken: pair.accessToken, refreshToken: pair.refreshToken }, rateLimit: { requestsPerSecond: 500 } },
        state,
        log: { level: 'info', pretty: false },
        http: { enabled: false },
        sync: {
          defaults: { schedule: '* * * * * *', safetyLag: 'PT2S', initialFrom: handle.options.dataStart },
          streams: { loads: { enabled: true, sinks: ['drop'] }, customers: { enabled: true, sinks: ['drop'] } },
        },
        connectors: { drop: { type: 'csv', options: { directory: './out' } } },
      }),
    );
    const run = runCli(['run', '-c', config], { cwd: dir });
    // Server time runs ahead while the processes work, so access tokens keep expiring under them.
    const ticker = setInterval(() => handle.advance(1_000), 200);
    try {
      const deadline = Date.now() + 30_000;
      while (!/daemon running/.test(run.stderr()) && Date.now() < deadline && run.child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      expect(run.stderr()).toMatch(/daemon running/);
      const to = new Date(handle.now().getTime()).toISOString();
      const others = [
        runCli(['sync', '-c', config, '--stream', 'customers'], { cwd: dir }),
        runCli(['backfill', '-c', config, '--stream', 'loads', '--from', handle.options.dataStart, '--to', to], { cwd: dir }),
        runCli(['sync', '-c', config, '--stream', 'loads'], { cwd: dir }),
      ];
      const exits = await Promise.all(others.map((o) => o.exited));
      exits.forEach((exit, i) => expect(exit.code, others[i]!.stderr().slice(-1500)).toBe(0));
      // The daemon keeps working after the others rotated the token under it: another pass succeeds.
      const before = handle.stats().byRoute['GET /loads']?.['200'] ?? 0;
      const waitUntil = Date.now() + 30_000;
      while ((handle.stats().byRoute['GET /loads']?.['200'] ?? 0) <= before && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 100));
      expect(handle.stats().byRoute['GET /loads']?.['200'] ?? 0).toBeGreaterThan(before);
      expect(run.child.exitCode).toBeNull();
      expect(run.stderr()).not.toMatch(/refresh token was rejected/);
      expect(handle.stats().retiredRefreshTokenUses).toBe(0);
      expect(handle.stats().tokensIssued).toBeGreaterThan(2);
    } finally {
      clearInterval(ticker);
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }, 120_000);

  it.each(DIALECTS)('a refresh lock held by a stopped replica, brokerage with client credentials on %s: refreshes with POST /retrieve-token without the lock after the patience; nothing rotated', async (dialect) => {
    sim = await startSim({ variant: 'brokerage', loads: 100, accessTokenTtlMs: 5_000 });
    const location: StateLocation =
      dialect === 'postgres' ? postgresStateLocation(POSTGRES!) : { kind: 'sqlite', path: path.join(tempDir('token-stuck-holder'), 'state.sqlite') };
    if (location.kind === 'postgres') cleanups.push(() => dropPostgresSchema(location.url, location.schema));
    const db = await openState(location);
    // Closed before the schema is dropped (cleanups run in order).
    cleanups.unshift(() => db.destroy());
    await migrateToLatest(db);
    const store = new SqlTokenStore(db);
    const client = new ApiClient({
      baseUrl: sim.baseUrl,
      variant: 'brokerage',
      credentials: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
      tokenStore: store,
      logger: silentLogger(),
      rateLimit: { requestsPerSecond: 500, maxInFlight: 2, adaptive: false },
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxElapsedMs: 10_000 },
      // The stopped holder's lock outlives this test: only the patience can end the wait.
      refreshLockTtlMs: 600_000,
      refreshLockPatienceMs: 200,
    });
    cleanups.unshift(async () => client.close());
    const account = client.tokens.account;

    expect((await listLoads(client, { limit: 10, sortBy: 'asc' })).items).toHaveLength(10);
    const before = await store.load(account);
    expect(before?.refreshToken).toBeTruthy();

    // The other replica took the lock for its refresh and was stopped inside it.
    expect(await store.acquireRefreshLock(account, STUCK_HOLDER, 600_000)).toBe(true);
    // This process's access token expires: it must refresh.
    sim.advance(6_000);
    const page = await listLoads(client, { skip: 10, limit: 10, sortBy: 'asc' });
    expect(page.items).toHaveLength(10);

    const after = await store.load(account);
    expect(after?.accessToken).not.toBe(before?.accessToken);
    // The refresh token is the one the server keeps: nothing was rotated, nothing spent.
    expect(after?.refreshToken).toBe(before?.refreshToken);
    const routes = sim.stats().byRoute;
    expect(routes['GET /generate-new-token']).toBeUndefined();
    expect(routes['POST /retrieve-token']?.['200']).toBe(2);
    expect(sim.stats().retiredRefreshTokenUses).toBe(0);
    // The stopped replica's lock was left alone: it is still its holder's.
    expect(await store.acquireRefreshLock(account, '4243:probe:another-host', 1_000)).toBe(false);
  });
});
