import type { Kysely, Migration } from 'kysely';
import { autoId } from './auto-id.js';

/**
 * The first schema. Written with the schema builder only; the one dialect-sensitive spot is the
 * auto-increment id, which Kysely renders per dialect.
 */
export const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('tokens')
      .addColumn('account', 'text', (c) => c.primaryKey())
      .addColumn('access_token', 'text')
      .addColumn('refresh_token', 'text')
      .addColumn('access_expires_at', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('checkpoints')
      .addColumn('stream', 'text', (c) => c.primaryKey())
      .addColumn('cursor', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('runs')
      .addColumn('id', 'integer', (c) => autoId(db, c))
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('command', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('records', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('error', 'text')
      .execute();
    // `last(stream)` and `status` read the newest runs of one stream.
    await db.schema.createIndex('runs_stream_id').on('runs').columns(['stream', 'id']).execute();

    await db.schema
      .createTable('seen_records')
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('seen_records_pk', ['stream', 'key'])
      .execute();
  },

  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('seen_records').execute();
    await db.schema.dropTable('runs').execute();
    await db.schema.dropTable('checkpoints').execute();
    await db.schema.dropTable('tokens').execute();
  },
};
