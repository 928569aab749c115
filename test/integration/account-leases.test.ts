import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dbNowMs } from '../../src/state/db-clock.js';
import { LeaseLostError, LeaseStore, ReplicaStore, assertLeaseHeld, claimBudget, fairShareTarget, type Lease } from '../../src/state/leases/index.js';
import { CheckpointStore, createStores } from '../../src/state/stores/index.js';
import { postgresLeaseTarget, sqliteLeaseTarget, waitFor, type LeaseTarget } from '../helpers/lease-targets.js';
import { probePostgres, requireService } from '../helpers/services.js';

const postgres = await probePostgres();
const hasPostgres = requireService('PostgreSQL', postgres);

const cursor = z.object({ at: z.string() });
const ACCOUNTS = Array.from({ length: 10 }, (_, i) => `acct-${String(i).padStart(2, '0')}`);

async function expireNow(target: LeaseTarget, account: string): Promise<void> {
  // Moves the expiry into the past on the database's own clock (no sleep).
  await target.db.updateTable('account_leases').set({ expires_at_ms: 0 }).where('account', '=', account).execute();
}

async function checkpointAt(target: LeaseTarget, stream: string): Promise<string | undefined> {
  return (await new CheckpointStore(target.db).get(stream, cursor))?.at;
}

describe.each([
  { dialect: 'sqlite', open: () => sqliteLeaseTarget(), skip: false },
  { dialect: 'postgres', open: () => postgresLeaseTarget(postgres.url!), skip: !hasPostgres },
])('account leases on $dialect', ({ open, skip }) => {
  let target: LeaseTarget;
  let leases: LeaseStore;
  beforeAll(async () => {
    if (skip) return;
    target = await open();
    leases = new LeaseStore(target.db);
  });
  afterAll(async () => target?.close());
  beforeEach(async () => target?.reset());

  describe.skipIf(skip)('claim, renew, release', () => {
    it('claims free accounts with epoch 1; another holder gets none while they are held', async () => {
      const got = await leases.claim(['b', 'a'], { holder: 'A', ttlMs: 60_000 });
      expect(got.map((l) => [l.account, l.holder, l.epoch])).toEqual([
        ['a', 'A', 1],
        ['b', 'A', 1],
      ]);
      const now = await dbNowMs(target.db);
      for (const lease of got) expect(lease.expiresAtMs).toBeGreaterThan(now + 50_000);
      expect(await leases.claim(['a', 'b'], { holder: 'B', ttlMs: 60_000 })).toEqual([]);
      expect((await leases.list()).map((r) => [r.account, r.holder, r.epoch])).toEqual([
        ['a', 'A', 1],
        ['b', 'A', 1],
      ]);
    });

    it('re-claiming a lease still held is a renewal: same epoch, later expiry', async () => {
      const [first] = await leases.claim(['a'], { holder: 'A', ttlMs: 1_000 });
      const [again] = await leases.claim(['a'], { holder: 'A', ttlMs: 60_000 });
      expect(again!.epoch).toBe(first!.epoch);
      expect(again!.expiresAtMs).toBeGreaterThan(first!.expiresAtMs);
    });

    it('a claim after expiry bumps the epoch, also for the same holder', async () => {
      await leases.claim(['a'], { holder: 'A', ttlMs: 60_000 });
      await expireNow(target, 'a');
      expect((await leases.claim(['a'], { holder: 'A', ttlMs: 60_000 }))[0]!.epoch).toBe(2);
      await expireNow(target, 'a');
      expect((await leases.claim(['a'], { holder: 'B', ttlMs: 60_000 }))[0]).toMatchObject({ holder: 'B', epoch: 3 });
    });

    it('a lease expires by the database clock (tiny TTL) and is then lost to renew and free to claim', async () => {
      const [lease] = await leases.claim(['a'], { holder: 'A', ttlMs: 200 });
      expect(await leases.claim(['a'], { holder: 'B', ttlMs: 60_000 })).toEqual([]);
      await waitFor(async () => (await dbNowMs(target.db)) > lease!.expiresAtMs, 10_000, 'the lease to expire');
      expect(await leases.renew([lease!], 60_000)).toEqual([]);
      expect((await leases.claim(['a'], { holder: 'B', ttlMs: 60_000 }))[0]).toMatchObject({ holder: 'B', epoch: 2 });
    });

    it('renew extends only leases still ours under the same epoch, and reports the lost ones by omission', async () => {
      const got = await leases.claim(['a', 'b'], { holder: 'A', ttlMs: 5_000 });
      await expireNow(target, 'b');
      await leases.claim(['b'], { holder: 'B', ttlMs: 60_000 });
      const renewed = await leases.renew(got, 60_000);
      expect(renewed.map((l) => l.account)).toEqual(['a']);
      expect(renewed[0]!.expiresAtMs).toBeGreaterThan(got[0]!.expiresAtMs);
      // A stale epoch is not renewed even by its holder.
      expect(await leases.renew([{ ...got[0]!, epoch: 0 }], 60_000)).toEqual([]);
      expect((await leases.list()).find((r) => r.account === 'b')).toMatchObject({ holder: 'B', epoch: 2 });
    });

    it('release frees at once (the next claim bumps the epoch); a stale epoch releases nothing', async () => {
      const got = await leases.claim(['a'], { holder: 'A', ttlMs: 60_000 });
      expect(await leases.release([{ ...got[0]!, epoch: 7 }])).toBe(0);
      expect(await leases.release([{ ...got[0]!, holder: 'B' }])).toBe(0);
      expect(await leases.release(got)).toBe(1);
      expect((await leases.list())[0]).toMatchObject({ account: 'a', holder: null, epoch: 1 });
      expect((await leases.claim(['a'], { holder: 'B', ttlMs: 60_000 }))[0]).toMatchObject({ holder: 'B', epoch: 2 });
    });

    it('claims at most `max`, preferring leases it holds already', async () => {
      await leases.claim(['acct-09'], { holder: 'A', ttlMs: 60_000 });
      const got = await leases.claim(ACCOUNTS, { holder: 'A', ttlMs: 60_000, max: 3 });
      expect(got.map((l) => l.account)).toEqual(['acct-00', 'acct-01', 'acct-09']);
      expect(await leases.heldCount('A')).toBe(3);
    });
  });

  describe.skipIf(skip)('fair share', () => {
    it('with 10 accounts and 2 live replicas each claims at most 5; a stale replica does not count; the cap bounds it', async () => {
      const replicas = new ReplicaStore(target.db);
      await replicas.heartbeat({ id: 'A', host: 'h1', pid: 1 });
      await replicas.heartbeat({ id: 'B', host: 'h2', pid: 2 });
      await replicas.heartbeat({ id: 'C', host: 'h3', pid: 3 });
      await target.db.updateTable('replicas').set({ heartbeat_at_ms: 0 }).where('id', '=', 'C').execute();
      const live = await replicas.liveCount(30_000);
      expect(live).toBe(2);

      const claimFor = async (holder: string, cap?: number) => {
        const target = fairShareTarget(ACCOUNTS.length, live, cap);
        return leases.claim(ACCOUNTS, { holder, ttlMs: 60_000, max: claimBudget(target, await leases.heldCount(holder)) });
      };
      const a = await claimFor('A');
      const b = await claimFor('B');
      expect(a).toHaveLength(5);
      expect(b).toHaveLength(5);
      // Claiming again claims nothing more: A holds its share.
      expect(await claimFor('A')).toEqual([]);
      expect(new Set([...a, ...b].map((l) => l.account)).size).toBe(10);

      expect(await replicas.prune(30_000)).toBe(1);
      await target.reset();
      expect(await claimFor('A', 3)).toHaveLength(3);
      expect(await claimFor('B', 3)).toHaveLength(3);
      expect(fairShareTarget(0, 2)).toBe(0);
      expect(fairShareTarget(11, 2)).toBe(6);
    });
  });

  describe.skipIf(skip)('fencing', () => {
    it('a holder whose lease was taken commits nothing; the new holder commits', async () => {
      const [a] = await leases.claim(['acct'], { holder: 'A', ttlMs: 60_000 });
      const storesA = createStores(target.db, { fence: a! });
      await storesA.checkpoints.set('loads', { at: 'A-1' }, cursor);
      expect(await checkpointAt(target, 'loads')).toBe('A-1');

      await expireNow(target, 'acct');
      const [b] = await new LeaseStore(target.connect()).claim(['acct'], { holder: 'B', ttlMs: 60_000 });
      expect(b!.epoch).toBe(2);

      const lost = await storesA.checkpoints.set('loads', { at: 'A-2' }, cursor).catch((e: unknown) => e);
      expect(lost).toBeInstanceOf(LeaseLostError);
      expect(lost).toMatchObject({ account: 'acct', holder: 'A', epoch: 1 });
      await expect(storesA.transaction((tx) => tx.checkpoints.set('loads', { at: 'A-3' }, cursor))).rejects.toBeInstanceOf(LeaseLostError);
      await expect(storesA.checkpoints.delete('loads')).rejects.toBeInstanceOf(LeaseLostError);
      expect(await checkpointAt(target, 'loads')).toBe('A-1');

      const storesB = createStores(target.db, { fence: b! });
      await storesB.transaction((tx) => tx.checkpoints.set('loads', { at: 'B-1' }, cursor));
      expect(await checkpointAt(target, 'loads')).toBe('B-1');
    });

    it('an expired lease fences even when nobody claimed it since', async () => {
      const [a] = await leases.claim(['acct'], { holder: 'A', ttlMs: 60_000 });
      await expireNow(target, 'acct');
      await expect(createStores(target.db, { fence: a! }).checkpoints.set('loads', { at: 'late' }, cursor)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await checkpointAt(target, 'loads')).toBeUndefined();
    });

    it('a released lease fences its former holder', async () => {
      const [a] = await leases.claim(['acct'], { holder: 'A', ttlMs: 60_000 });
      await leases.release([a!]);
      await expect(createStores(target.db, { fence: a! }).transaction((tx) => tx.checkpoints.set('loads', { at: 'x' }, cursor))).rejects.toBeInstanceOf(LeaseLostError);
      expect(await checkpointAt(target, 'loads')).toBeUndefined();
    });

    it('unfenced stores write as before, lease or not', async () => {
      await createStores(target.db).checkpoints.set('loads', { at: 'free' }, cursor);
      expect(await checkpointAt(target, 'loads')).toBe('free');
    });
  });
});

/*
 * Concurrency on PostgreSQL: real parallel transactions from separate pools (SQLite has one writer:
 * a second connection's claim would only wait on the write lock).
 */
// A regression here tends to deadlock two transactions waiting on each other: fail fast.
describe.skipIf(!hasPostgres)('account leases under concurrency on postgres', { timeout: 20_000 }, () => {
  let target: LeaseTarget;
  beforeAll(async () => {
    target = await postgresLeaseTarget(postgres.url!);
  });
  afterAll(async () => target?.close());
  beforeEach(async () => target.reset());

  it('many parallel claims and releases from two pools: each epoch of an account goes to one claim, epochs count the claims', async () => {
    const pools = [target.connect(), target.connect()];
    const seen: Lease[] = [];
    const holders = Array.from({ length: 6 }, (_, i) => ({ id: `R${i % 2}-${i}`, store: new LeaseStore(pools[i % 2]!) }));
    await Promise.all(
      holders.map(async ({ id, store }) => {
        for (let round = 0; round < 15; round++) {
          const got = await store.claim(ACCOUNTS, { holder: id, ttlMs: 30_000, max: 4 });
          seen.push(...got);
          // Hold briefly so claims overlap, then hand the accounts back.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
          await store.release(got);
        }
      }),
    );
    expect(seen.length).toBeGreaterThan(ACCOUNTS.length);
    const rows = await new LeaseStore(target.db).list();
    for (const account of ACCOUNTS) {
      const claims = seen.filter((l) => l.account === account).map((l) => l.epoch).sort((x, y) => x - y);
      // Every claim followed a release: each got a new epoch, so no epoch repeats…
      expect(new Set(claims).size).toBe(claims.length);
      // …and the epochs are exactly 1..n: no claim was lost or counted twice.
      expect(claims).toEqual(Array.from({ length: claims.length }, (_, i) => i + 1));
      expect(rows.find((r) => r.account === account)).toMatchObject({ holder: null, epoch: claims.length });
    }
  });

  it('racing claims with long leases: each account ends with exactly one holder', async () => {
    const pools = [target.connect(), target.connect()];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => new LeaseStore(pools[i % 2]!).claim(ACCOUNTS, { holder: `R${i % 2}`, ttlMs: 60_000, max: 3 })),
    );
    const byAccount = new Map<string, Set<string>>();
    for (const lease of results.flat()) byAccount.set(lease.account, (byAccount.get(lease.account) ?? new Set()).add(`${lease.holder}@${lease.epoch}`));
    for (const [, holders] of byAccount) expect(holders.size).toBe(1);
    const rows = await new LeaseStore(target.db).list();
    expect(rows.filter((r) => r.holder !== null).every((r) => r.epoch === 1)).toBe(true);
  });

  it('a claim made while a fenced transaction is open and unchecked wins; the fenced commit then fails', async () => {
    const storeA = new LeaseStore(target.connect());
    const storeB = new LeaseStore(target.connect());
    const [a] = await storeA.claim(['acct'], { holder: 'A', ttlMs: 60_000 });
    let claimedByB: Lease[] = [];
    const committing = createStores(target.connect(), { fence: a! }).transaction(async (tx) => {
      await tx.checkpoints.set('loads', { at: 'A' }, cursor);
      // Writes done, not committed: A is paused; meanwhile its lease expires and B claims.
      await expireNow(target, 'acct');
      claimedByB = await storeB.claim(['acct'], { holder: 'B', ttlMs: 60_000 });
    });
    await expect(committing).rejects.toBeInstanceOf(LeaseLostError);
    expect(claimedByB).toMatchObject([{ holder: 'B', epoch: 2 }]);
    expect(await checkpointAt(target, 'loads')).toBeUndefined();
  });

  it('once the fence check passed, a claimer skips the account until the fenced transaction committed', async () => {
    const storeB = new LeaseStore(target.connect());
    const [a] = await new LeaseStore(target.db).claim(['acct'], { holder: 'A', ttlMs: 400 });
    const fence: Lease = a!;
    let duringA: Lease[] | undefined;
    const db = target.connect();
    await db.transaction().execute(async (trx) => {
      await new CheckpointStore(trx).set('loads', { at: 'A' }, cursor);
      await assertLeaseHeld(trx, fence);
      // Between the check and COMMIT the lease runs out by the database clock; B tries to claim.
      await waitFor(async () => (await dbNowMs(target.db)) > fence.expiresAtMs, 10_000, 'the lease to expire');
      duringA = await storeB.claim(['acct'], { holder: 'B', ttlMs: 60_000 });
    });
    expect(duringA).toEqual([]);
    expect(await checkpointAt(target, 'loads')).toBe('A');
    // After A's commit, B takes over under a new epoch, and A's next fenced write fails.
    expect(await storeB.claim(['acct'], { holder: 'B', ttlMs: 60_000 })).toMatchObject([{ holder: 'B', epoch: 2 }]);
    await expect(createStores(target.db, { fence }).checkpoints.set('loads', { at: 'A-2' }, cursor)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('once the fence check passed, the holder renews and another process asks for a hand-over without waiting for the fenced commit', async () => {
    // Under load a fenced commit can take seconds; a renewal queued behind it let the holder's own
    // clock cut leases that were still valid (the 10-account chaos runs: hundreds of tenures cut).
    const [a] = await new LeaseStore(target.db).claim(['acct'], { holder: 'A', ttlMs: 60_000 });
    const renewer = new LeaseStore(target.connect());
    const asker = new LeaseStore(target.connect());
    let outcome: 'both done' | 'blocked by the fenced transaction' | undefined;
    await target.connect().transaction().execute(async (trx) => {
      await new CheckpointStore(trx).set('loads', { at: 'A' }, cursor);
      await assertLeaseHeld(trx, a!);
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      const fencePid = rows[0]!.pid;
      let done = false;
      const both = Promise.all([renewer.renew([a!], 90_000), asker.request('acct', { requester: 'C', command: 'backfill', ttlMs: 60_000 })]).finally(() => (done = true));
      // Either both statements finish, or one of them shows up waiting on this transaction's lock.
      while (!done && outcome === undefined) {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where ${fencePid}::int = any(pg_blocking_pids(pid))`.execute(target.db);
        if (waiting.rows[0]!.n > 0) outcome = 'blocked by the fenced transaction';
        else await new Promise((resolve) => setTimeout(resolve, 10));
      }
      outcome ??= 'both done';
      if (outcome === 'both done') {
        const [renewed, asked] = await both;
        expect(renewed).toMatchObject([{ holder: 'A', epoch: 1 }]);
        expect(asked.recorded).toBe(true);
        // The row was updated under our lock: a claimer still sees the lock on the new version
        // and skips the account, even once its deadline has passed.
        await expireNow(target, 'acct');
        expect(await new LeaseStore(target.connect()).claim(['acct'], { holder: 'B', ttlMs: 60_000 })).toEqual([]);
      } else both.catch(() => undefined);
    });
    expect(outcome).toBe('both done');
    expect(await checkpointAt(target, 'loads')).toBe('A');
    // A claimer still skips while a fenced commit is open (tested above) and the epoch stays A's.
    expect(await new LeaseStore(target.db).row('acct')).toMatchObject({ holder: 'A', epoch: 1 });
    // Committed: the expired lease is free now, to C who asked for it, under a new epoch.
    expect(await new LeaseStore(target.db).claim(['acct'], { holder: 'C', ttlMs: 60_000 })).toMatchObject([{ holder: 'C', epoch: 2 }]);
  });

  it('a claim already waiting on the lease row makes the fence check fail, never both succeed', async () => {
    const [a] = await new LeaseStore(target.db).claim(['acct'], { holder: 'A', ttlMs: 60_000 });
    // B takes the row over (forcibly: A's lease has not expired, so A's own check cannot fail on
    // the time) and has not committed yet when A checks.
    const dbB = target.connect();
    let releaseB!: () => void;
    const bHolds = new Promise<void>((resolve) => (releaseB = resolve));
    let bLocked!: () => void;
    const locked = new Promise<void>((resolve) => (bLocked = resolve));
    const claimB = dbB.transaction().execute(async (trx) => {
      await sql`select account from account_leases where account = 'acct' for update skip locked`.execute(trx);
      await trx.updateTable('account_leases').set({ holder: 'B', epoch: sql`epoch + 1`, expires_at_ms: sql`(extract(epoch from clock_timestamp()) * 1000)::bigint + 60000` }).where('account', '=', 'acct').execute();
      bLocked();
      await bHolds;
    });
    await locked;
    const commitA = createStores(target.connect(), { fence: a! })
      .transaction((tx) => tx.checkpoints.set('loads', { at: 'A' }, cursor))
      .then(() => 'committed', (error: unknown) => error);
    // A's check waits on B's row lock; B commits; A re-reads the row and fails.
    setTimeout(releaseB, 200);
    await claimB;
    expect(await commitA).toBeInstanceOf(LeaseLostError);
    expect(await checkpointAt(target, 'loads')).toBeUndefined();
  });
});
