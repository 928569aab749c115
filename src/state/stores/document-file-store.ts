import type { Kysely } from 'kysely';
import type { StateTables } from '../tables.js';

/** A stored document as the `documentFiles` stream delivered it. */
export interface KnownDocument {
  key: string;
  referenceNumber: string;
  type: string;
  record: Record<string, unknown>;
  /** Server time from which it is known to be on the load (see DocumentFilesTable.seen_at). */
  seenAt: string;
}

const IN_CHUNK = 500;

/**
 * Load documents whose files are stored (migration 0008). Read before a batch (what a load had),
 * written in the batch's commit (what it has now), so a crash between download and commit only
 * repeats the download: the file name is its content, and the store replaces it with itself.
 */
export class DocumentFileStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Every known document of these loads, by reference number. */
  async forLoads(referenceNumbers: readonly string[]): Promise<Map<string, KnownDocument[]>> {
    const byLoad = new Map<string, KnownDocument[]>();
    const unique = [...new Set(referenceNumbers)];
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const rows = await this.db.selectFrom('document_files').selectAll().where('reference_number', 'in', unique.slice(i, i + IN_CHUNK)).orderBy('document_key').execute();
      for (const row of rows) {
        const list = byLoad.get(row.reference_number) ?? [];
        list.push({ key: row.document_key, referenceNumber: row.reference_number, type: row.type, record: JSON.parse(row.record) as Record<string, unknown>, seenAt: row.seen_at });
        byLoad.set(row.reference_number, list);
      }
    }
    return byLoad;
  }

  async remember(documents: readonly KnownDocument[]): Promise<void> {
    const at = this.now().toISOString();
    for (const doc of documents) {
      const values = { reference_number: doc.referenceNumber, type: doc.type, record: JSON.stringify(doc.record), seen_at: doc.seenAt, stored_at: at };
      await this.db
        .insertInto('document_files')
        .values({ document_key: doc.key, ...values })
        .onConflict((oc) => oc.column('document_key').doUpdateSet(values))
        .execute();
    }
  }

  async forget(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += IN_CHUNK) {
      await this.db.deleteFrom('document_files').where('document_key', 'in', keys.slice(i, i + IN_CHUNK)).execute();
    }
  }
}
