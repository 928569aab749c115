import { spawnSync } from 'node:child_process';
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
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(true);
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
  // B's late release does not free A's lock.
  await ahead.releaseRefreshLock(account, 'B');
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
}

/**
 * On PostgreSQL the lock is the account row of `token_refresh_locks` locked FOR UPDATE by an open
 * transaction: no clock decides while the holder lives, its death frees it at once (cluster
 * chaos: a replica SIGKILLed inside a refresh kept the new lease holder waiting for the lock's
 * 60 s deadline), and a holder that vanished without closing its connection loses it after the
 * TTL (the server ends the idle transaction).
 */
async function postgresLockContract(db: Kysely<StateTables>, url: string, schema: string): Promise<void> {
  const ahead = new SqlTokenStore(db, skewed(HOURS_2));
  const behind = new SqlTokenStore(db, skewed(-HOURS_2));
  const account = `acct-${Math.random().toString(36).slice(2)}`;
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(true);
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(true);
  // B's late release does not free A's lock.
  await ahead.releaseRefreshLock(account, 'B');
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);
  await behind.releaseRefreshLock(account, 'A');

  // A holder that vanished without a word: idle in its transaction past the TTL, the server ends it.
  expect(await ahead.acquireRefreshLock(account, 'B', 150)).toBe(true);
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(false);
  await pause(600);
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(true);
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(false);

  // A holder killed: its connection ends (here: terminated), and the lock is free at once, long
  // before its 60 s TTL.
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    // Only the session holding this schema's lock row (other tests share the server).
    const { rows } = await admin.query<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_locks
        where locktype = 'relation' and relation = $1::regclass and mode = 'RowShareLock' and pid <> pg_backend_pid()`,
      [`"${schema}".token_refresh_locks`],
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
  } finally {
    await admin.end();
  }
  expect(await ahead.acquireRefreshLock(account, 'B', 60_000)).toBe(true);
  await ahead.releaseRefreshLock(account, 'B');
  await behind.releaseRefreshLock(account, 'A');

  // A process of an older version knows only the row's deadline: a live one is respected.
  await db.updateTable('token_refresh_locks').set({ holder: 'old-version', expires_at_ms: (await dbNowMs(db)) + 60_000 }).where('account', '=', account).execute();
  expect(await behind.acquireRefreshLock(account, 'A', 60_000)).toBe(false);
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

  it.skipIf(!pgAvailable)('PostgreSQL: every migration runs; the lock is a row lock that dies with its holder, or after the TTL idle', async () => {
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
