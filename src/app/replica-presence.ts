import { claimBudget, fairShareTarget, type LeaseStore, type ReplicaIdentity, type ReplicaStore } from '../state/leases/index.js';
import type { Logger } from '../util/logger.js';
import type { DaemonService } from './daemon.js';

export interface ReplicaPresenceOptions {
  me: ReplicaIdentity;
  replicas: ReplicaStore;
  leases: LeaseStore;
  /** How many accounts there are to share (the configured accounts). */
  accounts: () => number;
  /** Leases one replica holds at most. */
  cap?: number;
  heartbeatMs: number;
  /** A replica silent this long no longer counts (a few heartbeats). */
  staleMs: number;
  /** At most one lease handed over per this many ms (a few claim intervals). */
  handOverEveryMs: number;
  logger: Logger;
}

export interface ReplicaPresence extends DaemonService {
  /**
   * Fair share (AccountLeaseServiceOptions.withinShare): runs `claim` if this replica holds fewer
   * leases than its share. One at a time in this process, so its account services, polling
   * together, cannot all see the same free slot and overshoot.
   */
  withinShare<T>(claim: () => Promise<T | undefined>): Promise<T | undefined>;
  /**
   * AccountLeaseServiceOptions.shouldHandOver: true for one of this replica's leases when it
   * holds more than its share (another replica joined). One lease per `handOverEveryMs`: the
   * count must see the release before the next one is given up, or a replica would shed too many.
   */
  shouldHandOver(): Promise<boolean>;
}

/**
 * This replica's row in `replicas`, heartbeated by the database clock, and the fair-share gate
 * built on it: a replica claims while it holds fewer leases than ceil(accounts / live replicas),
 * capped. Start it before the account lease services (it stops after them: the row goes once
 * their leases are released, so the others count one replica fewer at once).
 */
export function replicaPresenceService(options: ReplicaPresenceOptions): ReplicaPresence {
  const { me, replicas, leases, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let lastHandOver = 0;
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const turn = queue.then(work);
    queue = turn.catch(() => undefined);
    return turn;
  };
  const share = async () => fairShareTarget(options.accounts(), await replicas.liveCount(options.staleMs), options.cap);
  return {
    name: 'replica-presence',
    async start() {
      await replicas.heartbeat(me);
      timer = setInterval(
        () => void replicas.heartbeat(me).catch((error: unknown) => logger.warn({ err: error }, 'cannot renew the replica heartbeat')),
        options.heartbeatMs,
      );
      timer.unref();
      // Nothing loops here: the heartbeat is a timer.
      return { loops: new Promise<void>(() => undefined) };
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await replicas.remove(me.id);
    },
    withinShare<T>(claim: () => Promise<T | undefined>): Promise<T | undefined> {
      return inTurn(async () => (claimBudget(await share(), await leases.heldCount(me.id)) > 0 ? claim() : undefined));
    },
    shouldHandOver(): Promise<boolean> {
      return inTurn(async () => {
        if (Date.now() - lastHandOver < options.handOverEveryMs) return false;
        const target = await share();
        const held = await leases.heldCount(me.id);
        if (held <= target) return false;
        lastHandOver = Date.now();
        logger.info({ held, target }, `holding ${held} account leases, over this replica's share of ${target}: handing one over`);
        return true;
      });
    },
  };
}
