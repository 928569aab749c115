import type { Kysely, Migration } from 'kysely';
import { autoId } from './auto-id.js';

/**
 * `webhook_inbox`: every accepted webhook delivery (and every event the catch-up read from the
 * event log), stored before the 200 goes out so an acknowledged event is never lost. The key is
 * the event id when the body carries one, else a digest of the raw body, so a repeated delivery
 * lands once. Processing state and retry policy live with the row (attempts, next attempt at,
 * last error), like a job queue.
 */
export const webhookInbox: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('webhook_inbox')
      .addColumn('id', 'integer', (c) => autoId(db, c))
      .addColumn('event_key', 'text', (c) => c.notNull().unique())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('family', 'text', (c) => c.notNull())
      .addColumn('reference_number', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'text')
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('processed_at', 'text')
      .execute();
    await db.schema.createIndex('webhook_inbox_due').on('webhook_inbox').columns(['state', 'next_attempt_at']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('webhook_inbox').execute();
  },
};
