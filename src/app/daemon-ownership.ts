import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { ownerAlive, StateOwnedError, type DaemonOwnerStore } from '../state/stores/index.js';
import type { Logger } from '../util/logger.js';
import { parseHolderId, type LeaseStore } from '../state/leases/index.js';
import { processAlive } from '../util/process-alive.js';
import type { DaemonService } from './daemon.js';

/** How often `run` renews its heartbeat, and how old a heartbeat may get before its owner counts as gone. */
export const OWNER_HEARTBEAT_MS = 10_000;
export const OWNER_STALE_AFTER_MS = 60_000;

function alive(owner: Parameters<typeof ownerAlive>[0]): boolean {
  return ownerAlive(owner, { now: Date.now(), staleAfterMs: OWNER_STALE_AFTER_MS });
}

/**
 * The first service of `run`: records this process as the owner of the state store (host, pid,
 * start, heartbeat) and releases it on stop. A second `run` on the same state refuses to start
 * while the first lives: both would move the same checkpoints.
 */
export function daemonOwnershipService(store: DaemonOwnerStore, options: { statePath: string; logger: Logger }): DaemonService {
  const holder = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const me = { holder, host: os.hostname(), pid: process.pid };
  let timer: NodeJS.Timeout | undefined;
  return {
    name: 'state-owner',
    async start() {
      const other = await store.claim(me, alive);
      if (other) throw new StateOwnedError(other, options.statePath, 'stop that daemon first: two daemons on one state store would overwrite each other\'s checkpoints');
      let warned = false;
      const renew = async () => {
        if (await store.heartbeat(holder)) return;
        // The record was removed (`reset --force`) or taken over after we looked dead: claim it
        // again so reset keeps seeing this daemon, unless another live daemon holds it now.
        const other = await store.claim(me, alive);
        if (other && !warned) {
          warned = true;
          options.logger.warn({ host: other.host, pid: other.pid }, `another daemon now owns ${options.statePath}; two daemons on one state store overwrite each other's checkpoints`);
        }
      };
      timer = setInterval(() => void renew().catch((error: unknown) => options.logger.warn({ err: error }, 'cannot renew the daemon ownership heartbeat')), OWNER_HEARTBEAT_MS);
      timer.unref();
      // Nothing loops here: the heartbeat is a timer.
      return { loops: new Promise<void>(() => undefined) };
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await store.release(holder);
    },
  };
}

/**
 * Throws StateOwnedError naming the process that works the account: the `run` recorded as the
 * owner of a SQLite file, or one holding the account's lease (its deadline not passed by the
 * database clock) — a replica on PostgreSQL, or a `sync`/`backfill` beside the daemon. A holder on
 * this host whose process is gone (killed) does not count: its lease only waits for its expiry.
 */
export async function assertNoDaemon(store: DaemonOwnerStore, statePath: string, advice: string, leases?: LeaseStore, account?: string): Promise<void> {
  const owner = await store.current();
  if (owner && alive(owner)) throw new StateOwnedError(owner, statePath, advice);
  // With several accounts the leases of the others share the table: only this account's counts.
  const held = leases ? (await leases.live()).find((l) => account === undefined || l.account === account) : undefined;
  if (!held?.holder) return;
  const { host, pid } = parseHolderId(held.holder);
  if (host === os.hostname() && !processAlive(pid)) return;
  const until = new Date(held.expiresAtMs).toISOString();
  const what = held.holderCommand ?? 'a process';
  throw new StateOwnedError({ holder: held.holder, host, pid, startedAt: `${what}, lease epoch ${held.epoch}`, heartbeatAt: `lease held until ${until}` }, statePath, advice);
}
