import type { Kysely, Migration } from 'kysely';

/**
 * `runs.checkpoint_at` and `runs.lag_seconds`: where the stream's checkpoint stood when the run
 * finished, and how far behind the (server) clock that was. The console charts lag over the last
 * days from them; before this migration only the current lag was known.
 */
export const runLag: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('runs').addColumn('checkpoint_at', 'text').execute();
    await db.schema.alterTable('runs').addColumn('lag_seconds', 'integer').execute();
    // The console reads every stream's runs of the last days by start time.
    await db.schema.createIndex('runs_started_at').on('runs').columns(['started_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('runs_started_at').execute();
    await db.schema.alterTable('runs').dropColumn('lag_seconds').execute();
    await db.schema.alterTable('runs').dropColumn('checkpoint_at').execute();
  },
};
