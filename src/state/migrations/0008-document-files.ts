import type { Kysely, Migration } from 'kysely';

/**
 * Document files (issue 15): each load document whose file has been stored, with the facts its
 * `documentFiles` record carries (checksum, size, name, location). A document of a load that is
 * no longer there is found by comparing the load's current documents with these rows (tombstone);
 * a document already here is not downloaded again.
 */
export const documentFiles: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('document_files')
      .addColumn('document_key', 'text', (c) => c.primaryKey())
      .addColumn('reference_number', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('record', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'text', (c) => c.notNull())
      .addColumn('stored_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('document_files_load').on('document_files').columns(['reference_number', 'type']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('document_files').execute();
  },
};
