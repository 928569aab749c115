import type { Kysely, Migration } from 'kysely';

/**
 * `webhook_inbox.arm_count`: how many times an event row was armed again after it was stored. A
 * load event carries no event id, so its key is a digest of its body, and a later change that
 * looks the same (a hold set, cleared and set again) arrives with the key of the first. It must not
 * be dropped: the refresh of the first may have read the load before the new change. Each such
 * delivery adds one to `arm_count` (or makes a processed row pending again), and the processor
 * settles a row only if its `arm_count` is still the one it took: a refresh in flight when the
 * same body arrived again leaves the row pending, and a later refresh covers the new change.
 * `armed_at`: the receipt (server clock) of the latest event that armed the row (null on rows from
 * before: their `received_at`); an event-log entry that happened before it is covered by the row's
 * refresh, which starts after it.
 * Portable schema builder call (SQLite and PostgreSQL).
 */
export const webhookInboxArmCount: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('webhook_inbox')
      .addColumn('arm_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('webhook_inbox').addColumn('armed_at', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('webhook_inbox').dropColumn('armed_at').execute();
    await db.schema.alterTable('webhook_inbox').dropColumn('arm_count').execute();
  },
};
