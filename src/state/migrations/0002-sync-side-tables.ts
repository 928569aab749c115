import type { Kysely, Migration } from 'kysely';
import { autoId } from './auto-id.js';

/**
 * Bookkeeping the pull engine needs beyond cursors:
 * - `invoice_index` / `invoice_loads`: every invoice delivered, whether it is final (FULL_PAID),
 *   and which loads it covers — so non-final invoices are re-polled until paid (design §2.4).
 * - `invoice_candidates`: loads that should have an invoice the list has not shown yet (load
 *   status BILLING and later, `invoice#*` webhook events); fetched one by one (gap-fill).
 * - `rejected_records`: list elements that failed their schema, kept with the raw JSON so
 *   nothing vanishes silently.
 */
export const syncSideTables: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('invoice_index')
      .addColumn('invoice_id', 'text', (c) => c.primaryKey())
      .addColumn('status', 'text')
      .addColumn('billing_date', 'text')
      .addColumn('is_final', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('invoice_index_open').on('invoice_index').columns(['is_final', 'billing_date']).execute();

    await db.schema
      .createTable('invoice_loads')
      .addColumn('load_reference_number', 'text', (c) => c.primaryKey())
      .addColumn('invoice_id', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('invoice_loads_invoice').on('invoice_loads').column('invoice_id').execute();

    await db.schema
      .createTable('invoice_candidates')
      .addColumn('load_reference_number', 'text', (c) => c.primaryKey())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .execute();

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
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('rejected_records').execute();
    await db.schema.dropTable('invoice_candidates').execute();
    await db.schema.dropTable('invoice_loads').execute();
    await db.schema.dropTable('invoice_index').execute();
  },
};
