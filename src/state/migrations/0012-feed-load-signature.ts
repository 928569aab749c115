import type { Kysely, Migration } from 'kysely';

/**
 * The invoices change feed remembers, per load, a signature of the load's billing fields (status,
 * amounts, charges, payments) next to its updatedAt: a load that changed only operationally
 * (times, notes, dispatch) keeps its signature, and its invoice — when the list omits it — is not
 * fetched again one by one (issue 12, steady-state cost). Null for loads remembered before.
 */
export const feedLoadSignature: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('invoice_feed_loads').addColumn('billing_signature', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('invoice_feed_loads').dropColumn('billing_signature').execute();
  },
};
