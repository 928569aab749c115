import type { Kysely, Migration } from 'kysely';

/**
 * `token_reauth`: one row per account whose tokens are truly lost (the refresh token was rejected
 * after the store was re-read and no client credentials are configured, or the client
 * credentials were rejected). Every process sharing the state sees it and pauses that account's
 * API work instead of asking the token endpoints again in a loop; `status`, `/readyz` and the
 * metrics report it. Cleared by a successful token retrieval (e.g. `freight-sync check`) or by a
 * config with other credentials (`credentials` is the fingerprint of the rejected ones).
 * Portable schema (SQLite and PostgreSQL): no auto-increment, times as ISO text.
 */
export const tokenReauth: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('token_reauth')
      .addColumn('account', 'text', (c) => c.primaryKey())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('since', 'text', (c) => c.notNull())
      .addColumn('credentials', 'text')
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('token_reauth').execute();
  },
};
