import { afterEach, describe, expect, it, vi } from 'vitest';
import { DispatchLease } from '../../src/outbound/dispatch-lease.js';
import { OutboxBusyError } from '../../src/outbound/errors.js';
import { dbNowMs } from '../../src/state/db-clock.js';
import { freshStateOn, stateDialects, type FreshState } from '../helpers/state-db.js';

/**
 * Issue 11: the outbox dispatcher lease of a lease holder that died on ANOTHER host (its pid
 * cannot be checked) frees at its deadline, which is set and compared by the database clock and
 * is as long as the lease's TTL (the daemon passes the account lease TTL), not a fixed 30 s by
 * each host's own clock. This process's clock is moved two hours off (only `Date` is faked).
 */
const HOURS_2 = 2 * 60 * 60 * 1000;
let state: FreshState | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await state?.dispose();
  state = undefined;
});

describe.each(await stateDialects())('dispatcher lease by the database clock (%s)', (dialect) => {
  async function heldElsewhere(expiresAtMs: number): Promise<void> {
    await state!.db.deleteFrom('outbox_lease').execute();
    await state!.db
      .insertInto('outbox_lease')
      .values({ name: 'dispatcher', holder: 'other-host:4242:dead', host: 'other-host.invalid', pid: 4242, expires_at: new Date(expiresAtMs).toISOString() })
      .execute();
  }

  it('a dead holder on another host frees at its deadline by the database clock, and a new deadline is TTL ahead of it', async () => {
    state = await freshStateOn(dialect);
    const db = state.db;
    const lease = new DispatchLease(db, 'test state', 4_000);

    // Live by the database clock, expired by a local clock two hours ahead: not taken.
    await heldElsewhere((await dbNowMs(db)) + 60_000);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + HOURS_2);
    await expect(lease.acquire()).rejects.toBeInstanceOf(OutboxBusyError);

    // Expired by the database clock, live by a local clock two hours behind: taken.
    vi.setSystemTime(Date.now() - 2 * HOURS_2);
    await heldElsewhere((await dbNowMs(db)) - 1_000);
    const before = await dbNowMs(db);
    await lease.acquire();
    const row = await db.selectFrom('outbox_lease').selectAll().executeTakeFirstOrThrow();
    expect(row.holder).toBe(lease.holder);
    // The TTL asked for (the account lease's), from the database clock.
    expect(Date.parse(row.expires_at)).toBeGreaterThanOrEqual(before + 4_000);
    expect(Date.parse(row.expires_at)).toBeLessThan((await dbNowMs(db)) + 4_000 + 1_000);
    await lease.release();
  });
});
