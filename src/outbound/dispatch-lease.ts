import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { StateTables } from '../state/tables.js';
import { processAlive } from '../util/process-alive.js';
import { OutboxBusyError } from './errors.js';

const LEASE = 'dispatcher';
const TTL_MS = 30_000;

/**
 * One dispatcher per state database. Taken when free, expired, or held by a process of this host
 * that no longer exists (so a rerun right after `kill -9` need not wait for the expiry); renewed
 * while held.
 */
export class DispatchLease {
  readonly holder = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly location: string,
  ) {}

  async acquire(): Promise<void> {
    const host = os.hostname();
    // A compare-and-set (insert when absent, replace only the row judged free), so two processes
    // cannot both take the lease on any dialect: on PostgreSQL a read-then-upsert transaction at
    // READ COMMITTED would let both win.
    for (;;) {
      const current = await this.db.selectFrom('outbox_lease').selectAll().where('name', '=', LEASE).executeTakeFirst();
      const now = Date.now();
      const free =
        !current ||
        current.holder === this.holder ||
        Date.parse(current.expires_at) < now ||
        (current.host === host && !processAlive(current.pid));
      if (!free) throw new OutboxBusyError(`${current.host} pid ${current.pid}`, this.location);
      const values = { holder: this.holder, host, pid: process.pid, expires_at: new Date(now + TTL_MS).toISOString() };
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
    this.timer = setInterval(() => void this.renew().catch(() => undefined), TTL_MS / 3);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    await this.db
      .updateTable('outbox_lease')
      .set({ expires_at: new Date(Date.now() + TTL_MS).toISOString() })
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
