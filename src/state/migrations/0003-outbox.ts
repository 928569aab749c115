import type { Kysely, Migration } from 'kysely';
import { autoId } from './auto-id.js';

/**
 * Outbound push (design §3):
 * - `outbox`: one durable row per command, unique by (erp_key, kind, revision). The state machine
 *   (pending → sending → done | retry | reconciling | dead, plus cancelled) and the retry policy
 *   (attempts, next_attempt_at, last_error) live on the row, so a restart resumes exactly where
 *   the previous process stopped. `sending` is written BEFORE the HTTP call: a row found in
 *   `sending` at start-up may have reached the server and is reconciled, never re-sent blindly.
 * - `outbox_units` / `outbox_inbound`: every request of every unit a source handed over (file,
 *   staging claim), pointing at its command or holding its validation error, so the results can
 *   be written back once all of them are final — also after a crash.
 * - `customer_directory`: customers and consignees the pull side synced, so ERP codes
 *   (companyID, company name) resolve to API ids before a command is sent.
 * - `outbox_lease`: which process dispatches; two dispatchers could each reconcile the other's
 *   in-flight create, find nothing yet, and send it again.
 */
export const outbox: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('outbox')
      .addColumn('id', 'integer', (c) => autoId(db, c))
      .addColumn('erp_key', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('load_group', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('content_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('sent_at', 'text')
      .addColumn('result_reference_number', 'text')
      .addColumn('result_load_id', 'text')
      .addColumn('result_note', 'text')
      .addColumn('origin_source', 'text', (c) => c.notNull())
      .addColumn('origin_unit', 'text', (c) => c.notNull())
      .addColumn('origin_ref', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema.createIndex('outbox_key').on('outbox').columns(['erp_key', 'kind', 'revision']).unique().execute();
    await db.schema.createIndex('outbox_state_due').on('outbox').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('outbox_group').on('outbox').columns(['load_group', 'id']).execute();
    await db.schema.createIndex('outbox_result_ref').on('outbox').column('result_reference_number').execute();

    await db.schema
      .createTable('outbox_units')
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('unit_id', 'text', (c) => c.notNull())
      .addColumn('location', 'text', (c) => c.notNull())
      .addColumn('requests', 'integer', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('written_at', 'text')
      .addPrimaryKeyConstraint('outbox_units_pk', ['source', 'unit_id'])
      .execute();
    await db.schema.createIndex('outbox_units_state').on('outbox_units').column('state').execute();

    await db.schema
      .createTable('outbox_inbound')
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('unit_id', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('outbox_id', 'integer')
      .addColumn('error', 'text')
      .addColumn('note', 'text')
      .addPrimaryKeyConstraint('outbox_inbound_pk', ['source', 'unit_id', 'ref'])
      .execute();
    await db.schema.createIndex('outbox_inbound_command').on('outbox_inbound').column('outbox_id').execute();

    await db.schema
      .createTable('customer_directory')
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('collection', 'text', (c) => c.notNull())
      .addColumn('company_id', 'text')
      .addColumn('company_name', 'text')
      .addColumn('is_deleted', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('customer_directory_pk', ['collection', 'id'])
      .execute();
    await db.schema.createIndex('customer_directory_code').on('customer_directory').column('company_id').execute();
    await db.schema.createIndex('customer_directory_name').on('customer_directory').column('company_name').execute();
    await db.schema.createIndex('customer_directory_id').on('customer_directory').column('id').execute();

    await db.schema
      .createTable('outbox_lease')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('outbox_lease').execute();
    await db.schema.dropTable('customer_directory').execute();
    await db.schema.dropTable('outbox_inbound').execute();
    await db.schema.dropTable('outbox_units').execute();
    await db.schema.dropTable('outbox').execute();
  },
};
