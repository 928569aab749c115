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
  logger: Logger;
}

export interface ReplicaPresence extends DaemonService {
  /**
   * Fair share (AccountLeaseServiceOptions.withinShare): runs `claim` if this replica holds fewer
   * leases than its share. One at a time in this process, so its account services, polling
   * together, cannot all see the same free slot and overshoot.
   */
  withinShare<T>(claim: () => Promise<T | undefined>): Promise<T | undefined>;
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
      const turn = queue.then(async () => {
        const target = fairShareTarget(options.accounts(), await replicas.liveCount(options.staleMs), options.cap);
        return claimBudget(target, await leases.heldCount(me.id)) > 0 ? claim() : undefined;
      });
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
