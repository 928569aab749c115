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
    } finally {
      await db.destroy();
    }
  });

  it.skipIf(!pgAvailable)('PostgreSQL: every migration runs, and the same lock contract holds', async () => {
    const state = await freshStateOn('postgres');
    const db = state.db;
    try {
      expect(stateDialect(db)).toBe('postgres');
      const now = await dbNowMs(db);
      expect(Math.abs(now - Date.now())).toBeLessThan(5_000);
      await lockContract(db);
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
