import type { Kysely, Migration } from 'kysely';

/**
 * `token_refresh_locks`: one row per account while a process refreshes its tokens. On brokerage a
 * refresh rotates the refresh token and the old one dies at once, so two processes sharing a
 * state store (`run` plus a `backfill`, or several replicas) must never refresh together: the
 * second would present a dead token. The row is a lock with a deadline (epoch milliseconds), so a
 * holder that crashed mid-refresh blocks the others for at most its TTL.
 */
export const tokenRefreshLock: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('token_refresh_locks')
      .addColumn('account', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('token_refresh_locks').execute();
  },
};
