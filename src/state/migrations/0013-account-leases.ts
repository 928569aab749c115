import type { Kysely, Migration } from 'kysely';

/**
 * Work distribution across replicas (issue 11, design §2b).
 *
 * `account_leases`: one row per API account; the replica named in `holder` runs the account's API
 * work until `expires_at_ms`. `epoch` grows by one on every claim that changes hands (or follows
 * an expiry), and every fenced write re-checks (account, holder, epoch) before it commits, so a
 * replica that lost its lease commits nothing. Expiry is epoch milliseconds as a bigint computed
 * in SQL from the database clock (src/state/db-clock.ts): an integer compares the same on SQLite
 * and PostgreSQL, whereas timestamps differ by dialect (SQLite has no timestamp type, and ISO text
 * written by replicas would carry their own skewed clocks).
 *
 * `replicas`: the live replicas (heartbeat by the database clock), so each claims about its fair
 * share of the accounts.
 *
 * Portable schema builder calls only (no autoIncrement): runs on SQLite and PostgreSQL.
 */
export const accountLeases: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('account_leases')
      .addColumn('account', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text')
      .addColumn('epoch', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at_ms', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('replicas')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started_at_ms', 'bigint', (c) => c.notNull())
      .addColumn('heartbeat_at_ms', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('replicas').execute();
    await db.schema.dropTable('account_leases').execute();
  },
};
