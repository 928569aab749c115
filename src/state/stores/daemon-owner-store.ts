import os from 'node:os';
import type { Kysely } from 'kysely';
import { processAlive } from '../../util/process-alive.js';
import { StateError } from '../errors.js';
import type { StateTables } from '../tables.js';

const ROW = 'daemon';

export interface DaemonOwner {
  holder: string;
  host: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
}

/** A command refused because a live daemon owns the state store. */
export class StateOwnedError extends StateError {
  readonly owner: DaemonOwner;
  constructor(owner: DaemonOwner, statePath: string, advice: string) {
    super(
      'STATE_OWNED',
      `a freight-sync daemon owns ${statePath} (host ${owner.host}, pid ${owner.pid}, running since ${owner.startedAt}, last heartbeat ${owner.heartbeatAt}); ${advice}`,
    );
    this.owner = owner;
  }
}

/**
 * Whether a recorded owner still runs: its heartbeat is recent, and — on this host — its pid
 * exists and is not ours. A daemon killed with SIGKILL leaves its row behind; the pid check frees it at once on
 * the same host, the stale heartbeat after `staleAfterMs` anywhere.
 */
export function ownerAlive(owner: DaemonOwner, options: { now: number; staleAfterMs: number; host?: string }): boolean {
  const heartbeat = Date.parse(owner.heartbeatAt);
  if (Number.isNaN(heartbeat) || options.now - heartbeat > options.staleAfterMs) return false;
  if (owner.host !== (options.host ?? os.hostname())) return true;
  // Our own pid on our own host is an earlier incarnation (a container restarted after a crash
  // runs the daemon as pid 1 again, under the same hostname): it cannot still be running.
  return owner.pid !== process.pid && processAlive(owner.pid);
}

/** The `daemon_owner` row (migration 0009): which `run` process owns this state store. */
export class DaemonOwnerStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async current(): Promise<DaemonOwner | undefined> {
    const row = await this.db.selectFrom('daemon_owner').selectAll().where('name', '=', ROW).executeTakeFirst();
    return row ? { holder: row.holder, host: row.host, pid: Number(row.pid), startedAt: row.started_at, heartbeatAt: row.heartbeat_at } : undefined;
  }

  /**
   * Records `me` as the owner unless another holder is alive (then returns that holder and
   * changes nothing). A compare-and-set, safe between processes on every dialect: the row is
   * inserted only when absent, or replaced only while it still holds what was judged dead — two
   * processes starting together cannot both win (on PostgreSQL a read-modify-write transaction
   * at READ COMMITTED would let them).
   */
  async claim(me: Pick<DaemonOwner, 'holder' | 'host' | 'pid'>, alive: (owner: DaemonOwner) => boolean): Promise<DaemonOwner | undefined> {
    for (;;) {
      const current = await this.current();
      if (current && current.holder !== me.holder && alive(current)) return current;
      const at = this.now().toISOString();
      const values = { holder: me.holder, host: me.host, pid: me.pid, started_at: at, heartbeat_at: at };
      const won = current
        ? Number(
            (
              await this.db
                .updateTable('daemon_owner')
                .set(values)
                .where('name', '=', ROW)
                .where('holder', '=', current.holder)
                .where('heartbeat_at', '=', current.heartbeatAt)
                .executeTakeFirst()
            ).numUpdatedRows,
          )
        : Number((await this.db.insertInto('daemon_owner').values({ name: ROW, ...values }).onConflict((oc) => oc.column('name').doNothing()).executeTakeFirst()).numInsertedOrUpdatedRows ?? 0n);
      if (won > 0) return undefined;
      // Another process changed the row between the look and the write: judge the new one.
    }
  }

  /** Renews the heartbeat; false when the row is no longer ours (taken over after we looked dead). */
  async heartbeat(holder: string): Promise<boolean> {
    const result = await this.db
      .updateTable('daemon_owner')
      .set({ heartbeat_at: this.now().toISOString() })
      .where('name', '=', ROW)
      .where('holder', '=', holder)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async release(holder: string): Promise<void> {
    await this.db.deleteFrom('daemon_owner').where('name', '=', ROW).where('holder', '=', holder).execute();
  }

  /** Removes whatever owner is recorded (`reset --force`). */
  async clear(): Promise<void> {
    await this.db.deleteFrom('daemon_owner').where('name', '=', ROW).execute();
  }
}

