import { listInvoices, type InvoiceListQuery } from '../../api/endpoints/invoices.js';
import type { Page } from '../../api/paging.js';
import type { SyncSideStore } from '../../state/stores/sync-side-store.js';
import type { RawRecord } from '../stream-definition.js';
import { invoiceFacts, markSubCustomer } from './invoice-key.js';
import { REMOVED_MARKER } from './snapshot.js';

/** What the invoices stream reads and how (stream options, see src/sync/streams/invoices.ts). */
export interface InvoiceOptions {
  includePaymentHistory: boolean;
  subCustomerInvoices: boolean;
  combinedInvoices: boolean;
  deletedInvoices: boolean;
  loadsChangeFeed: boolean;
  sweepDays: number;
  /** ms */
  sweepPeriod: number;
  sweepMaxRequestsPerPass: number;
}

/**
 * The two listings of `GET /invoices` (spec §4.2): `main` returns loads' own invoices and, when
 * asked, combined ones; `sub` (`isSubCustomer=true`) returns only sub-customer invoices. Voided
 * invoices come with either when `isIncludeDeleted` is sent.
 */
export type InvoiceListing = 'main' | 'sub';

export function listingQuery(options: InvoiceOptions, listing: InvoiceListing): Partial<InvoiceListQuery> {
  return {
    includePaymentHistory: options.includePaymentHistory,
    isIncludeDeleted: options.deletedInvoices || undefined,
    ...(listing === 'sub' ? { isSubCustomer: true } : { isShowCombinedInvoices: options.combinedInvoices || undefined }),
  };
}

/** The listings a configuration reads. */
export function listings(options: InvoiceOptions): InvoiceListing[] {
  return options.subCustomerInvoices ? ['main', 'sub'] : ['main'];
}

/** One page of a listing; what the sub-customer listing returned is marked so its key says so. */
export async function listPage(
  client: Parameters<typeof listInvoices>[0],
  options: InvoiceOptions,
  listing: InvoiceListing,
  query: InvoiceListQuery,
  signal: AbortSignal,
): Promise<Page<RawRecord>> {
  const page = (await listInvoices(client, { ...query, ...listingQuery(options, listing) }, signal)) as Page<RawRecord>;
  return listing === 'sub' ? { ...page, items: page.items.map(markSubCustomer) } : page;
}

/** Index bookkeeping of delivered invoices (tombstones built from the index carry their facts apart). */
export function bookkeeping(records: readonly RawRecord[]): Array<(side: SyncSideStore) => Promise<void>> {
  const facts = records.filter((r) => r[REMOVED_MARKER] !== true).map(invoiceFacts);
  return facts.length > 0 ? [(side) => side.recordInvoices(facts)] : [];
}
