import type { Kysely } from 'kysely';
import type { StateTables } from '../tables.js';

export type DirectoryCollection = 'customers' | 'consignees';

export interface DirectoryEntry {
  id: string;
  collection: DirectoryCollection;
  companyId: string | null;
  companyName: string | null;
}

const CHUNK = 400;

/**
 * Customers and consignees the pull side synced (keys `_id`, `companyID`, `company_name`), so a
 * command can name a caller, shipper or consignee by the ERP's code instead of the API id. Filled
 * in the same transaction as the streams' checkpoints (see src/sync/streams/customers.ts).
 */
export class CustomerDirectoryStore {
  constructor(private readonly db: Kysely<StateTables>) {}

  /** Upserts records as delivered by the customers / consignees streams. */
  async remember(collection: DirectoryCollection, records: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    const at = new Date().toISOString();
    for (const record of records) {
      const id = record['_id'];
      if (typeof id !== 'string' || id === '') continue;
      const values = {
        company_id: typeof record['companyID'] === 'string' && record['companyID'] !== '' ? record['companyID'] : null,
        company_name: typeof record['company_name'] === 'string' && record['company_name'] !== '' ? record['company_name'] : null,
        is_deleted: record['isDeleted'] === true ? 1 : 0,
        updated_at: at,
      };
      await this.db
        .insertInto('customer_directory')
        .values({ id, collection, ...values })
        .onConflict((oc) => oc.columns(['collection', 'id']).doUpdateSet(values))
        .execute();
    }
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('customer_directory').select((eb) => eb.fn.countAll<number>().as('n')).where('is_deleted', '=', 0).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Entries whose id, companyID or company name equals one of `values` (not deleted ones). */
  async lookup(values: readonly string[]): Promise<DirectoryEntry[]> {
    const unique = [...new Set(values)];
    const out: DirectoryEntry[] = [];
    for (let i = 0; i < unique.length; i += CHUNK) {
      const part = unique.slice(i, i + CHUNK);
      const rows = await this.db
        .selectFrom('customer_directory')
        .select(['id', 'collection', 'company_id', 'company_name'])
        .where('is_deleted', '=', 0)
        .where((eb) => eb.or([eb('id', 'in', part), eb('company_id', 'in', part), eb('company_name', 'in', part)]))
        .execute();
      for (const row of rows) out.push({ id: row.id, collection: row.collection as DirectoryCollection, companyId: row.company_id, companyName: row.company_name });
    }
    return out;
  }
}
