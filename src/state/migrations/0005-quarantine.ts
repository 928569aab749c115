import { sql, type Kysely, type Migration } from 'kysely';
import { autoId } from './auto-id.js';

/**
 * `quarantine`: the ONE store of records that did not land, whatever refused them (issue 12):
 * - `api-schema`: a list element that failed its schema or had no key (was `rejected_records`);
 * - `sink`: a record a sink refused (an ERP table constraint, a mapping that failed), one row per
 *   refusing sink, re-delivered to that sink with backoff until it lands, is superseded by a newer
 *   version, or is discarded;
 * - `webhook`: an inbox event parked as failed after its attempts (the inbox row stays `failed`).
 * One row per (kind, stream, item_key, sink): a record refused again updates its row (attempts,
 * last seen, reason) instead of piling up copies. `sink` is '' for kinds without one, so the
 * unique index holds (SQLite treats NULLs as distinct).
 * `runs.rejected`: records a run quarantined, beside the records it delivered.
 */
export const quarantine: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('quarantine')
      .addColumn('id', 'integer', (c) => autoId(db, c))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('item_key', 'text', (c) => c.notNull())
      .addColumn('sink', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('raw', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text')
      .addColumn('batch_id', 'text')
      .addColumn('webhook_event_id', 'integer')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('first_seen_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text')
      .execute();
    await db.schema.createIndex('quarantine_item').on('quarantine').columns(['kind', 'stream', 'item_key', 'sink']).unique().execute();
    await db.schema.createIndex('quarantine_due').on('quarantine').columns(['stream', 'kind', 'next_attempt_at']).execute();

    // What the three stores held so far moves in, so nothing already quarantined is forgotten.
    await sql`
      insert into quarantine (kind, stream, item_key, sink, reason, raw, batch_id, attempts, first_seen_at, last_seen_at)
      select 'api-schema', stream, batch_id || '#' || item_index || '#' || id, '', problem, raw, batch_id, 1, created_at, created_at
      from rejected_records`.execute(db);
    await sql`
      insert into quarantine (kind, stream, item_key, sink, reason, raw, webhook_event_id, attempts, first_seen_at, last_seen_at)
      select 'webhook', 'webhook:' || family, event_key, '', coalesce(last_error, 'failed'), body, id, attempts, received_at, coalesce(processed_at, received_at)
      from webhook_inbox where state = 'failed'`.execute(db);
    await db.schema.dropTable('rejected_records').execute();

    await db.schema.alterTable('runs').addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('runs').dropColumn('rejected').execute();
    await db.schema
      .createTable('rejected_records')
      .addColumn('id', 'integer', (c) => autoId(db, c))
      .addColumn('stream', 'text', (c) => c.notNull())
      .addColumn('batch_id', 'text', (c) => c.notNull())
      .addColumn('item_index', 'integer', (c) => c.notNull())
      .addColumn('problem', 'text', (c) => c.notNull())
      .addColumn('raw', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.dropTable('quarantine').execute();
  },
};
