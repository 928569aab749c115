import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Complete invoices (issue 12): a load has several invoices — its primary one, sub-customer
 * invoices, a combined invoice replacing it, a voided one and its rebilled successor — so:
 * - `invoice_links` (load, invoice) replaces `invoice_loads`, which held one invoice per load;
 * - `invoice_index` learns each invoice's kind (`primary`, `subCustomer`, `combined`) and whether
 *   it was voided, and is keyed by the record key (sub-customer and combined invoices may share
 *   an `_id` with the primary one);
 * - `invoice_feed_loads`: the load updatedAt up to which the invoices of a load have been fetched
 *   through the loads change feed, so an overlapping feed window costs no second fetch.
 */
export const invoiceLinks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('invoice_links')
      .addColumn('load_reference_number', 'text', (c) => c.notNull())
      .addColumn('invoice_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('invoice_links_pk', ['load_reference_number', 'invoice_id'])
      .execute();
    await db.schema.createIndex('invoice_links_invoice').on('invoice_links').column('invoice_id').execute();
    await sql`insert into invoice_links (load_reference_number, invoice_id) select load_reference_number, invoice_id from invoice_loads`.execute(db);
    await db.schema.dropTable('invoice_loads').execute();

    await db.schema.alterTable('invoice_index').addColumn('kind', 'text', (c) => c.notNull().defaultTo('primary')).execute();
    await db.schema.alterTable('invoice_index').addColumn('is_deleted', 'integer', (c) => c.notNull().defaultTo(0)).execute();

    await db.schema
      .createTable('invoice_feed_loads')
      .addColumn('load_reference_number', 'text', (c) => c.primaryKey())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('invoice_feed_loads').execute();
    await db.schema.alterTable('invoice_index').dropColumn('is_deleted').execute();
    await db.schema.alterTable('invoice_index').dropColumn('kind').execute();
    await db.schema
      .createTable('invoice_loads')
      .addColumn('load_reference_number', 'text', (c) => c.primaryKey())
      .addColumn('invoice_id', 'text', (c) => c.notNull())
      .execute();
    await sql`insert into invoice_loads (load_reference_number, invoice_id) select load_reference_number, min(invoice_id) from invoice_links group by load_reference_number`.execute(db);
    await db.schema.dropTable('invoice_links').execute();
  },
};
