import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import { dbNowMs } from '../state/db-clock.js';
import type { StateTables } from '../state/tables.js';
import { processAlive } from '../util/process-alive.js';
import { OutboxBusyError } from './errors.js';

const LEASE = 'dispatcher';
const DEFAULT_TTL_MS = 30_000;

/**
 * One dispatcher per state database. Taken when free, expired, or held by a process of this host
 * that no longer exists (so a rerun right after `kill -9` need not wait for the expiry); renewed
 * every third of `ttlMs` while held. Deadlines are set and compared by the database clock: a
 * holder on another host whose clock is behind must not keep it past its TTL (nor one ahead lose
 * it early). The daemon passes the account lease TTL, so after a failover the dead holder's
 * dispatcher lease is free no later than its account lease (issue 11).
 */
export class DispatchLease {
  readonly holder = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly location: string,
    private readonly ttlMs: number = DEFAULT_TTL_MS,
  ) {}

  async acquire(): Promise<void> {
    const host = os.hostname();
    // A compare-and-set (insert when absent, replace only the row judged free), so two processes
    // cannot both take the lease on any dialect: on PostgreSQL a read-then-upsert transaction at
    // READ COMMITTED would let both win.
    for (;;) {
      const current = await this.db.selectFrom('outbox_lease').selectAll().where('name', '=', LEASE).executeTakeFirst();
      const now = await dbNowMs(this.db);
      const free =
        !current ||
        current.holder === this.holder ||
        Date.parse(current.expires_at) < now ||
        (current.host === host && !processAlive(current.pid));
      if (!free) throw new OutboxBusyError(`${current.host} pid ${current.pid}`, this.location);
      const values = { holder: this.holder, host, pid: process.pid, expires_at: new Date(now + this.ttlMs).toISOString() };
      const result = current
        ? await this.db
            .updateTable('outbox_lease')
            .set(values)
            .where('name', '=', LEASE)
            .where('holder', '=', current.holder)
            .where('expires_at', '=', current.expires_at)
            .executeTakeFirst()
            .then((r) => r.numUpdatedRows)
        : await this.db
            .insertInto('outbox_lease')
            .values({ name: LEASE, ...values })
            .onConflict((oc) => oc.column('name').doNothing())
            .executeTakeFirst()
            .then((r) => r.numInsertedOrUpdatedRows ?? 0n);
      if (Number(result) > 0) break;
    }
    this.timer = setInterval(() => void this.renew().catch(() => undefined), this.ttlMs / 3);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    await this.db
      .updateTable('outbox_lease')
      .set({ expires_at: new Date((await dbNowMs(this.db)) + this.ttlMs).toISOString() })
      .where('name', '=', LEASE)
      .where('holder', '=', this.holder)
      .execute();
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.db.deleteFrom('outbox_lease').where('name', '=', LEASE).where('holder', '=', this.holder).execute();
  }
}
