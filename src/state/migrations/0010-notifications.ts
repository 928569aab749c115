import type { Kysely, Migration } from 'kysely';

/**
 * `notification_conditions`: the conditions the notifier has announced and not yet seen clear
 * (a stream failing, a dead letter, rejected records, …), one row per condition key. Kept in the
 * state database so a restarted daemon neither announces an open condition again nor forgets to
 * say when it recovered.
 */
export const notifications: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('notification_conditions')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('summary', 'text', (c) => c.notNull())
      .addColumn('opened_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('notification_conditions').execute();
  },
};
