import type { Kysely, Migration } from 'kysely';

/**
 * One-shot commands take turns with the daemon (issue 11 item 6): `sync` and `backfill` work an
 * account under its lease like `run` does.
 *
 * `holder_command`: what the holder is (`run`, `sync`, `backfill`), so `status` and the logs can
 * say who works the account. Null once released (and on rows written before this migration).
 *
 * `requested_by`, `requested_command`, `request_expires_at_ms`: a hand-over request by a one-shot
 * waiting for the lease. While it lives (its deadline by the database clock not passed) nobody but
 * the requester may claim the lease, and a `run` holder drains its work and releases it. It
 * expires unless the requester re-asserts it, so a requester that crashed blocks nobody for long;
 * the requester's own claim clears it.
 *
 * Portable schema builder calls (SQLite and PostgreSQL).
 */
export const leaseHandOverRequests: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('account_leases').addColumn('holder_command', 'text').execute();
    await db.schema.alterTable('account_leases').addColumn('requested_by', 'text').execute();
    await db.schema.alterTable('account_leases').addColumn('requested_command', 'text').execute();
    await db.schema
      .alterTable('account_leases')
      .addColumn('request_expires_at_ms', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const column of ['request_expires_at_ms', 'requested_command', 'requested_by', 'holder_command']) {
      await db.schema.alterTable('account_leases').dropColumn(column).execute();
    }
  },
};
