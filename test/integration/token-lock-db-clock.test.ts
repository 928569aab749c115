import { spawnSync } from 'node:child_process';
import os from 'node:os';
import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dbNowMs, stateDialect } from '../../src/state/db-clock.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import type { StateTables } from '../../src/state/tables.js';
import { freshStateDatabase, freshStateOn } from '../helpers/state-db.js';
import { probePostgres, requireService } from '../helpers/services.js';

/**
 * Issue 11, item 4: the token refresh lock (a row with a deadline) expires by the DATABASE
 * clock. Processes on hosts whose clocks differ must neither take a live lock over (a host whose
 * clock runs ahead) nor wait for ever on a dead one (a host whose clock runs behind). Each store
 * below gets a local clock off by two hours; only the database clock may decide.
 */
const HOURS_2 = 2 * 60 * 60 * 1000;
const skewed = (offsetMs: number) => () => new Date(Date.now() + offsetMs);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function lockContract(db: Kysely<StateTables>): Promise<void> {
  const ahead = new SqlTokenStore(db, skewed(HOURS_2));
  const behind = new SqlTokenStore(db, skewed(-HOURS_2));
  const account = `acct-${Math.random().toString(36).slice(2)}`;

  // The deadline is the database clock plus the TTL, whatever the holder's local clock says.
  const before = await dbNowMs(db);
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(true);
  const row = await db.selectFrom('token_refresh_locks').select('expires_at_ms').where('account', '=', account).executeTakeFirstOrThrow();
  const deadline = Number(row.expires_at_ms);
  expect(deadline).toBeGreaterThanOrEqual(before + 60_000);
  expect(deadline).toBeLessThan((await dbNowMs(db)) + 60_000 + 1_000);

  // A holder on a host whose clock runs two hours ahead must not take A's live lock.
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
  // A holder may renew its own lock.
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(true);
  await behind.releaseRefreshLock(account, 'A');

  // A short lock taken by the host that runs ahead expires for a host that runs behind once the
  // DATABASE clock passed its deadline (by local clocks it would live two more hours).
  expect(await ahead.acquireRefreshLock(account, 'B', 150)).toBe(true);
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(false);
  await pause(400);
  // Taken over from a holder that never released it: the taker is told (B may still be refreshing).
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe('took-over-expired');
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
  // B's late release does not free A's lock.
  await ahead.releaseRefreshLock(account, 'B');
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
}

/**
 * On PostgreSQL too the lock is a committed row with a deadline (the generic contract above), plus:
 * - it outlives its holder's connection: a refresh whose connection the database ended while the
 *   API call was in flight (cluster chaos terminates a replica's backends) still keeps the others
 *   away, so nobody spends the refresh token that call is rotating on brokerage. (Before, the lock
 *   was a row lock of an open transaction and went with the connection.)
 * - a holder whose process is gone on this host is taken over at once (a replica SIGKILLed inside
 *   a refresh must not keep the new lease holder waiting for the deadline); a dead pid on another
 *   host, or a holder id without a host, is not judged from here: its deadline decides.
 * - no pooled connection is held while the lock is: refreshes of many accounts cannot starve a
 *   shared pool (the 10-account chaos run timed out waiting for connections).
 */
async function postgresLockContract(db: Kysely<StateTables>, url: string, schema: string): Promise<void> {
  await lockContract(db);
  const store = new SqlTokenStore(db);
  const account = `acct-${Math.random().toString(36).slice(2)}`;
  const here = os.hostname();

  // Terminate the session that took the lock (a separate pool, as another replica's).
  const { default: pg } = await import('pg');
  const other = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}`, application_name: `lock-holder-${account}` });
  other.on('error', () => undefined);
  const { Kysely: K, PostgresDialect } = await import('kysely');
  const otherDb = new K<StateTables>({ dialect: new PostgresDialect({ pool: other }) });
  try {
    expect(await new SqlTokenStore(otherDb).acquireRefreshLock(account, `${process.pid}:holder:${here}`, 60_000)).toBe(true);
    // Holding the lock holds no connection: the holder's pool has none checked out.
    expect(other.totalCount - other.idleCount).toBe(0);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>(`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1`, [`lock-holder-${account}`]);
      expect(rows[0]!.n).toBe(1);
    } finally {
      await admin.end();
    }
    // Its process lives (this one): the lock holds although its connection is gone.
    expect(await store.acquireRefreshLock(account, `${process.pid}:other:${here}`, 60_000)).toBe(false);
  } finally {
    await otherDb.destroy();
  }
  await db.deleteFrom('token_refresh_locks').where('account', '=', account).execute();

  // A holder killed on this host: taken over at once, long before its 60 s deadline.
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  expect(await store.acquireRefreshLock(account, `${dead}:killed:${here}`, 60_000)).toBe(true);
  expect(await store.acquireRefreshLock(account, `${process.pid}:next:${here}`, 60_000)).toBe(true);
  await store.releaseRefreshLock(account, `${process.pid}:next:${here}`);
  // The same pid on another host, or without a host: not judged from here.
  expect(await store.acquireRefreshLock(account, `${dead}:elsewhere:some-other-host`, 60_000)).toBe(true);
  expect(await store.acquireRefreshLock(account, `${process.pid}:next:${here}`, 60_000)).toBe(false);
  await store.releaseRefreshLock(account, `${dead}:elsewhere:some-other-host`);
  expect(await store.acquireRefreshLock(account, `${dead}:no-host`, 60_000)).toBe(true);
  expect(await store.acquireRefreshLock(account, `${process.pid}:next:${here}`, 60_000)).toBe(false);
  await store.releaseRefreshLock(account, `${dead}:no-host`);

  // A process of an older version knows only the row's deadline: a live one is respected.
  await db.insertInto('token_refresh_locks').values({ account, holder: 'old-version', expires_at_ms: (await dbNowMs(db)) + 60_000 }).execute();
  expect(await store.acquireRefreshLock(account, `${process.pid}:next:${here}`, 60_000)).toBe(false);
}

const probe = await probePostgres();
const pgAvailable = requireService('PostgreSQL', probe);

describe('token refresh lock by the database clock', () => {
  it('SQLite: two holders with skewed local clocks; expiry by the database clock', async () => {
    const { db } = await freshStateDatabase();
    try {
      expect(stateDialect(db)).toBe('sqlite');
      // 'subsec' works in the bundled SQLite: milliseconds, not whole seconds, and near Date.now().
      const now = await dbNowMs(db);
      expect(Math.abs(now - Date.now())).toBeLessThan(5_000);
      await lockContract(db);
      // One host per file: a holder whose process is gone (`kill -9` inside a refresh) is taken
      // over at once, not after its 60 s deadline; a live one is not.
      const dead = spawnSync(process.execPath, ['-e', '']).pid;
      const store = new SqlTokenStore(db);
      expect(await store.acquireRefreshLock('acct-dead', `${dead}:old`, 60_000)).toBe(true);
      expect(await store.acquireRefreshLock('acct-dead', `${process.pid}:new`, 60_000)).toBe(true);
      expect(await store.acquireRefreshLock('acct-dead', `${dead}:later`, 60_000)).toBe(false);
    } finally {
      await db.destroy();
    }
  });

  it.skipIf(!pgAvailable)('PostgreSQL: every migration runs; the lock is a deadline that outlives its holder\'s connection, taken over at once from a dead process of this host', async () => {
    const state = await freshStateOn('postgres');
    const db = state.db;
    const location = state.location as { url: string; schema: string };
    try {
      expect(stateDialect(db)).toBe('postgres');
      const now = await dbNowMs(db);
      expect(Math.abs(now - Date.now())).toBeLessThan(5_000);
      await postgresLockContract(db, location.url, location.schema);
      // The reauth mark round-trips too (migration 0014 on PostgreSQL).
      const store = new SqlTokenStore(db);
      await store.markReauthRequired('acct', { reason: 'refresh token rejected', since: '2030-01-01T00:00:00.000Z', credentials: 'abc' });
      expect(await store.reauthRequired('acct')).toEqual({ reason: 'refresh token rejected', since: '2030-01-01T00:00:00.000Z', credentials: 'abc' });
      await store.clearReauthRequired('acct');
      expect(await store.reauthRequired('acct')).toBeUndefined();
    } finally {
      await state.dispose();
    }
  });
});
