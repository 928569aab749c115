import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { accountLeaseService, type AccountLeaseService, type AccountLeaseServiceOptions, type TenureSignals } from '../../src/app/account-lease-service.js';
import type { DaemonService } from '../../src/app/daemon.js';
import { LeaseStore, ReplicaStore, type Fence } from '../../src/state/leases/index.js';
import { replicaPresenceService, type ReplicaPresence } from '../../src/app/replica-presence.js';
import { CheckpointStore, createStores } from '../../src/state/stores/index.js';
import type { StateTables } from '../../src/state/tables.js';
import { silentLogger } from '../../src/util/logger.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { postgresLeaseTarget, sqliteLeaseTarget, waitFor, type LeaseTarget } from '../helpers/lease-targets.js';
import { probePostgres, requireService } from '../helpers/services.js';

const postgres = await probePostgres();
const hasPostgres = requireService('PostgreSQL', postgres);
const cursor = z.object({ at: z.string() });

interface WorkLog {
  events: string[];
  commits: string[];
}

/** A work service like a poller: commits a fenced checkpoint every few ms until told to stop. */
function pollerWork(db: Kysely<StateTables>, holder: string, log: WorkLog) {
  return (fence: Fence, signals: TenureSignals): DaemonService[] => {
    const stores = createStores(db, { fence });
    let n = 0;
    let loop: Promise<void> | undefined;
    return [
      {
        name: `poller:${holder}`,
        async start() {
          log.events.push(`${holder} start epoch ${fence.epoch}`);
          loop = (async () => {
            while (!signals.stopSignal.aborted) {
              const at = `${holder}@${fence.epoch}#${++n}`;
              await stores.transaction((tx) => tx.checkpoints.set('loads', { at }, cursor));
              log.commits.push(at);
              await new Promise((resolve) => setTimeout(resolve, 15));
            }
          })();
          return { loops: loop };
        },
        async stop() {
          await loop?.catch(() => undefined);
          log.events.push(`${holder} stop epoch ${fence.epoch} ${signals.abortSignal.aborted ? 'aborted' : 'drained'}`);
        },
      },
    ];
  };
}

describe.each([
  { dialect: 'sqlite', open: () => sqliteLeaseTarget(), skip: false },
  { dialect: 'postgres', open: () => postgresLeaseTarget(postgres.url!), skip: !hasPostgres },
])('account lease service on $dialect', ({ open, skip }) => {
  let target: LeaseTarget;
  const running: AccountLeaseService[] = [];
  beforeAll(async () => {
    if (!skip) target = await open();
  });
  afterAll(async () => {
    for (const service of running) await service.stop();
    await target?.close();
  });
  beforeEach(async () => target?.reset());

  function service(holder: string, db: Kysely<StateTables>, log: WorkLog, stop = new AbortController(), abort = new AbortController()) {
    const s = accountLeaseService({
      account: 'acct',
      holder,
      leases: new LeaseStore(db),
      ttlMs: 1_500,
      claimIntervalMs: 30,
      renewIntervalMs: 100,
      work: pollerWork(db, holder, log),
      stopSignal: stop.signal,
      abortSignal: abort.signal,
      logger: silentLogger(),
    });
    running.push(s);
    return s;
  }

  /** Replica A's lease service with the tests' timings; `work`, `logger` and any option given. */
  function serviceOfA(options: Pick<AccountLeaseServiceOptions, 'work' | 'logger'> & Partial<AccountLeaseServiceOptions>) {
    const s = accountLeaseService({
      account: 'acct',
      holder: 'A',
      leases: new LeaseStore(target.db),
      ttlMs: 1_500,
      claimIntervalMs: 30,
      renewIntervalMs: 100,
      stopSignal: new AbortController().signal,
      abortSignal: new AbortController().signal,
      ...options,
    });
    running.push(s);
    return s;
  }

  /** B takes the lease over (as after A's pause outlasted the TTL); its claim skips the row while one of A's fenced commits holds it, so it tries until it wins. */
  async function steal(thief: LeaseStore) {
    let stolen: Awaited<ReturnType<LeaseStore['claim']>>[number] | undefined;
    await waitFor(async () => {
      await target.db.updateTable('account_leases').set({ expires_at_ms: 0 }).where('account', '=', 'acct').execute();
      [stolen] = await thief.claim(['acct'], { holder: 'B', ttlMs: 60_000 });
      return stolen !== undefined;
    }, 10_000, 'B claimed the lease');
    return stolen;
  }

  it.skipIf(skip)('standby → active → lease stolen → work stopped → standby → active again; stop drains and releases', async () => {
    const log: WorkLog = { events: [], commits: [] };
    const a = service('A', target.db, log);
    expect(a.state()).toBe('standby');
    await a.start();
    await waitFor(() => a.state() === 'active' && log.commits.length >= 2, 10_000, 'A active and committing');
    expect(a.epoch()).toBe(1);

    // Another replica takes the lease over (as after A's pause outlasted the TTL). Its claim skips
    // the row while one of A's fenced commits holds it (FOR KEY SHARE), so it tries until it wins.
    const thief = new LeaseStore(target.connect());
    const stolen = await steal(thief);
    expect(stolen).toMatchObject({ holder: 'B' });
    const robbed = stolen!.epoch - 1;
    const committedBeforeSteal = log.commits.length;

    await waitFor(() => log.events.includes(`A stop epoch ${robbed} aborted`), 10_000, 'A\'s work stopped');
    await waitFor(() => a.state() === 'standby', 10_000, 'A in standby');
    expect(a.epoch()).toBeUndefined();
    // Nothing of A's committed after the steal: at most one commit that raced the claim itself.
    expect(log.commits.length - committedBeforeSteal).toBeLessThanOrEqual(1);
    expect((await new CheckpointStore(target.db).get('loads', cursor))!.at.startsWith(`A@${robbed}#`)).toBe(true);

    // B hands the lease back: A claims it again under a new epoch and works again.
    const next = stolen!.epoch + 1;
    await thief.release([stolen!]);
    await waitFor(() => a.state() === 'active' && log.commits.some((c) => c.startsWith(`A@${next}#`)), 10_000, 'A active again');
    expect(a.epoch()).toBe(next);

    await a.stop();
    expect(log.events.at(-1)).toBe(`A stop epoch ${next} drained`);
    expect(a.state()).toBe('standby');
    expect((await new LeaseStore(target.db).list())[0]).toMatchObject({ account: 'acct', holder: null, epoch: next });
  });

  it.skipIf(skip)('a lost lease is logged the moment it is known, before work that is slow to stop has stopped (chaos run 12)', async () => {
    const capture = capturingLogger('info');
    let release!: () => void;
    const slowStop = new Promise<void>((resolve) => (release = resolve));
    let stopReturned = false;
    const s = serviceOfA({
      // Its stop waits for something in flight that ignores the abort (a request near its timeout).
      work: () => [{ name: 'slow-to-stop', start: async () => ({ loops: slowStop }), stop: async () => { await slowStop; stopReturned = true; } }],
      logger: capture.logger,
    });
    await s.start();
    await waitFor(() => s.state() === 'active', 10_000, 'A active');
    const thief = new LeaseStore(target.connect());
    const stolen = await steal(thief);
    await waitFor(() => capture.text().includes('lease of account acct lost (epoch 1)'), 10_000, 'A logged the lost lease while its work was still stopping');
    expect(stopReturned).toBe(false);
    release();
    await waitFor(() => /work of account acct stopped \d+ ms after its lease was lost; back to standby/.test(capture.text()) && s.state() === 'standby', 10_000, 'A stopped its work and is in standby');
    expect(stopReturned).toBe(true);
    await s.stop();
    await thief.release([stolen!]);
  });

  it.skipIf(skip)('a lease that passes its deadline while its work drains is said lost at once, not when the drain ends (cluster chaos seed 40017)', async () => {
    const capture = capturingLogger('info');
    let release!: () => void;
    const slowStop = new Promise<void>((resolve) => (release = resolve));
    let stopReturned = false;
    const stop = new AbortController();
    const s = serviceOfA({
      // Its drain waits for something in flight (a token rotation storing its pair: up to 30 s).
      work: () => [{ name: 'slow-to-drain', start: async () => ({ loops: slowStop }), stop: async () => { await slowStop; stopReturned = true; } }],
      logger: capture.logger,
      stopSignal: stop.signal,
    });
    const { loops } = await s.start();
    await waitFor(() => s.state() === 'active', 10_000, 'A active');
    stop.abort();
    await waitFor(() => s.state() === 'draining', 10_000, 'A draining');
    // No renewal while draining: the TTL (1.5 s) passes on this replica's clock.
    await waitFor(() => capture.text().includes('lease of account acct lost (epoch 1) while its work drained: stopping its work'), 10_000, 'A said the lease lost while its drain still ran');
    expect(stopReturned).toBe(false);
    release();
    await loops;
    expect(stopReturned).toBe(true);
    // Said once as a warning; the end of the drain only confirms it.
    expect(capture.lines.filter((l) => l.includes('"level":40') && l.includes('lost (epoch 1)'))).toHaveLength(1);
  });

  it.skipIf(skip)('a fair-share turn slower than the TTL does not eat the tenure: its clock starts at the claim statement (chaos run 14)', async () => {
    const capture = capturingLogger('info');
    const log: WorkLog = { events: [], commits: [] };
    let turns = 0;
    const s = serviceOfA({
      // The first turn waits longer than the TTL (its share queries queued behind a busy pool).
      withinShare: async (claim) => {
        if (++turns === 1) await new Promise((resolve) => setTimeout(resolve, 2_000));
        return claim();
      },
      work: pollerWork(target.db, 'A', log),
      logger: capture.logger,
    });
    await s.start();
    await waitFor(() => log.commits.filter((c) => c.startsWith('A@1#')).length >= 5, 10_000, 'A working under epoch 1');
    expect(s.epoch()).toBe(1);
    expect(capture.text()).not.toContain('passed its deadline');
    await s.stop();
  });

  it.skipIf(skip)('a rolling deploy: the standby replica takes over as soon as the active one stopped', async () => {
    const log: WorkLog = { events: [], commits: [] };
    const a = service('A', target.db, log);
    await a.start();
    await waitFor(() => a.state() === 'active', 10_000, 'A active');
    const b = service('B', target.connect(), log);
    await b.start();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(b.state()).toBe('standby');

    await a.stop();
    // Released, not left to expire: the row no longer names A the moment stop returns (B may
    // already hold it), so B's claim did not wait for A's TTL.
    expect((await new LeaseStore(target.db).list())[0]!.holder).not.toBe('A');
    await waitFor(() => b.state() === 'active', 10_000, 'B active');
    expect(b.epoch()).toBe(2);
    await b.stop();
    expect(log.events).toEqual(['A start epoch 1', 'A stop epoch 1 drained', 'B start epoch 2', 'B stop epoch 2 drained']);
  });

  it.skipIf(skip)('renewals that hang (database unreachable, a pause): the work is cut by this replica\'s clock and assertHeld refuses API writes', async () => {
    const leases = new LeaseStore(target.db);
    let hang = false;
    let answer!: () => void;
    const hung = new Promise<Awaited<ReturnType<LeaseStore['renew']>>>((resolve) => (answer = () => resolve([])));
    // A renewal that does not answer (until the test ends), as with a lost database connection.
    const hanging = Object.assign(Object.create(leases) as LeaseStore, {
      renew: (held: Fence[], ttl: number) => (hang ? hung : leases.renew(held, ttl)),
    });
    const seen: { signals?: TenureSignals } = {};
    let stopped = 0;
    const s = accountLeaseService({
      account: 'acct',
      holder: 'A',
      leases: hanging,
      ttlMs: 1_500,
      claimIntervalMs: 30,
      renewIntervalMs: 100,
      work: (_fence, signals) => {
        seen.signals = signals;
        // Like the outbound poll, its loop does not end when the tenure is aborted: only stop() ends it.
        let ended!: () => void;
        const loops = new Promise<void>((resolve) => (ended = resolve));
        return [{ name: 'retrying', start: async () => ({ loops }), stop: async () => { stopped += 1; ended(); } }];
      },
      stopSignal: new AbortController().signal,
      abortSignal: new AbortController().signal,
      logger: silentLogger(),
    });
    running.push(s);
    await s.start();
    await waitFor(() => s.state() === 'active', 10_000, 'A active');
    expect(() => seen.signals!.assertHeld()).not.toThrow();
    expect(seen.signals!.isHeld()).toBe(true);
    hang = true;
    // The old service noticed only at the next renewal that came back: never, here.
    await waitFor(() => seen.signals!.abortSignal.aborted, 10_000, 'the tenure cut without a renewal answer');
    let refused: unknown;
    try {
      seen.signals!.assertHeld();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(Error);
    expect(seen.signals!.isHeld()).toBe(false);
    expect((refused as Error).name).toBe('AbortError');
    expect(((refused as Error).cause as Error).name).toMatch(/LeaseLost|StateError/);
    // It steps down while the renewal still hangs: the work stopped, back to standby.
    await waitFor(() => s.state() === 'standby' && stopped === 1, 10_000, 'A stepped down');
    answer();
    await s.stop();
    expect(s.state()).toBe('standby');
  });

  it.skipIf(skip)('isHeld (what drop writer locks trust): true through a tenure and its drain, false once it is over or the lease is taken', async () => {
    const tenures: { epoch: number; signals: TenureSignals; heldWhileDraining?: boolean }[] = [];
    const work = (fence: Fence, signals: TenureSignals): DaemonService[] => {
      const tenure: (typeof tenures)[number] = { epoch: fence.epoch, signals };
      tenures.push(tenure);
      let ended!: () => void;
      const loops = new Promise<void>((resolve) => (ended = resolve));
      const stop = async () => {
        tenure.heldWhileDraining ??= signals.isHeld();
        ended();
      };
      return [{ name: 'work', start: async () => ({ loops }), stop }];
    };
    const a = serviceOfA({ work, logger: silentLogger() });
    await a.start();
    await waitFor(() => a.state() === 'active', 10_000, 'A active');
    expect(tenures[0]!.signals.isHeld()).toBe(true);
    // Taken by another replica: false as soon as A learns it (its next renewal), before its work stopped.
    await steal(new LeaseStore(target.db));
    await waitFor(() => !tenures[0]!.signals.isHeld(), 10_000, 'A saw the lease taken');
    await target.db.updateTable('account_leases').set({ holder: null, expires_at_ms: 0 }).where('account', '=', 'acct').execute();
    await waitFor(() => tenures.length === 2 && a.state() === 'active', 10_000, 'A claimed again');
    expect(tenures[1]!.signals.isHeld()).toBe(true);
    expect(tenures[0]!.signals.isHeld()).toBe(false);
    await a.stop();
    // The drain (sinks publishing) still held it; once released, no longer.
    expect(tenures[1]!.heldWhileDraining).toBe(true);
    expect(tenures[1]!.signals.isHeld()).toBe(false);
  });

  it.skipIf(skip)('the daemon\'s stop signal drains and releases too', async () => {
    const log: WorkLog = { events: [], commits: [] };
    const stop = new AbortController();
    const a = service('A', target.db, log, stop);
    const { loops } = await a.start();
    await waitFor(() => a.state() === 'active', 10_000, 'A active');
    stop.abort();
    await loops;
    expect(log.events).toEqual(['A start epoch 1', 'A stop epoch 1 drained']);
    expect((await new LeaseStore(target.db).list())[0]).toMatchObject({ holder: null });
  });
});

/** An account's lease service under a replica's fair share (claim interval 20 ms, polling work). */
function sharedLeaseService(o: { db: Kysely<StateTables>; account: string; holder: string; log: WorkLog; presence: ReplicaPresence; ttlMs: number; handOver: boolean }): AccountLeaseService {
  return accountLeaseService({
    account: o.account,
    holder: o.holder,
    leases: new LeaseStore(o.db),
    ttlMs: o.ttlMs,
    claimIntervalMs: 20,
    work: pollerWork(o.db, o.holder, o.log),
    withinShare: (claim) => o.presence.withinShare(claim),
    ...(o.handOver ? { shouldHandOver: () => o.presence.shouldHandOver() } : {}),
    stopSignal: new AbortController().signal,
    abortSignal: new AbortController().signal,
    logger: silentLogger(),
  });
}

describe('fair share between account lease services (sqlite)', () => {
  it('with 4 accounts and 2 live replicas each runs 2', async () => {
    const target = await sqliteLeaseTarget();
    const services: AccountLeaseService[] = [];
    const log: WorkLog = { events: [], commits: [] };
    const accounts = ['a1', 'a2', 'a3', 'a4'];
    try {
      const presences = ['A', 'B'].map((id) =>
        replicaPresenceService({ me: { id, host: 'h', pid: 1 }, replicas: new ReplicaStore(target.db), leases: new LeaseStore(target.db), accounts: () => accounts.length, heartbeatMs: 1_000, staleMs: 10_000, handOverEveryMs: 100, logger: silentLogger() }),
      );
      for (const presence of presences) await presence.start();
      for (const [i, holder] of ['A', 'B'].entries()) {
        for (const account of accounts) {
          const s = sharedLeaseService({ db: target.db, account, holder, log, presence: presences[i]!, ttlMs: 5_000, handOver: false });
          services.push(s);
          await s.start();
        }
      }
      await waitFor(() => services.filter((s) => s.state() === 'active').length === 4, 10_000, 'all accounts active');
      const held = await new LeaseStore(target.db).list();
      expect(held.filter((r) => r.holder === 'A')).toHaveLength(2);
      expect(held.filter((r) => r.holder === 'B')).toHaveLength(2);
      for (const s of services) await s.stop();
      for (const presence of presences) await presence.stop();
      expect(await new ReplicaStore(target.db).liveCount(10_000)).toBe(1);
    } finally {
      for (const s of services) await s.stop();
      await target.close();
    }
  });

  it('a replica that joins later gets its share: the first hands leases over one at a time, drained', async () => {
    const target = await sqliteLeaseTarget();
    const services: AccountLeaseService[] = [];
    const log: WorkLog = { events: [], commits: [] };
    const accounts = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const presences = ['A', 'B'].map((id) =>
      replicaPresenceService({ me: { id, host: 'h', pid: 1 }, replicas: new ReplicaStore(target.db), leases: new LeaseStore(target.db), accounts: () => accounts.length, heartbeatMs: 50, staleMs: 10_000, handOverEveryMs: 100, logger: silentLogger() }),
    );
    const startReplica = async (i: number) => {
      const holder = ['A', 'B'][i]!;
      await presences[i]!.start();
      for (const account of accounts) {
        const s = sharedLeaseService({ db: target.db, account, holder, log, presence: presences[i]!, ttlMs: 600, handOver: true });
        services.push(s);
        await s.start();
      }
    };
    try {
      await startReplica(0);
      await waitFor(() => services.filter((s) => s.state() === 'active').length === 5, 10_000, 'A works all five');
      await startReplica(1);
      // ceil(5 / 2) = 3: A keeps 3 and hands 2 over; B (below its share) claims them.
      await waitFor(async () => {
        const held = await new LeaseStore(target.db).live();
        return held.filter((r) => r.holder === 'A').length === 3 && held.filter((r) => r.holder === 'B').length === 2;
      }, 20_000, 'A 3, B 2');
      // A handed over by draining: every tenure it ended was drained, none cut.
      expect(log.events.filter((e) => e.startsWith('A stop')).every((e) => e.endsWith('drained'))).toBe(true);
      expect(log.events.filter((e) => e.startsWith('A stop'))).toHaveLength(2);
    } finally {
      for (const s of services) await s.stop();
      for (const presence of presences) await presence.stop();
      await target.close();
    }
  });
});
