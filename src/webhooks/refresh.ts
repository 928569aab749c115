import { getInvoice } from '../api/endpoints/invoices.js';
import { getLoad, listLoadDocuments, listLoads } from '../api/endpoints/loads.js';
import type { ApiClient } from '../api/api-client.js';
import { isApiError } from '../api/errors.js';
import type { SyncSideStore } from '../state/stores/sync-side-store.js';
import type { RawRecord } from '../sync/stream-definition.js';
import { invoiceFacts } from '../sync/strategies/invoices.js';
import type { RejectedItem } from '../api/paging.js';
import { documentChanges, type DocumentObservation } from '../sync/document-files/document-changes.js';
import { documentRef } from '../sync/document-files/document-ref.js';
import type { DocumentFilesContext } from '../sync/document-files/store-document.js';

/** Families whose events are about a load (brokerage adds appointments and tenders, §6.3). */
export const LOAD_FAMILIES: ReadonlySet<string> = new Set(['load', 'appointments', 'tendor']);

/** Records a refresh produced, plus bookkeeping to commit with them. */
export interface Refreshed {
  records: RawRecord[];
  afterCommit: Array<(side: SyncSideStore) => Promise<void>>;
  /** Records to quarantine instead (a document file over the size limit). */
  rejected?: RejectedItem[];
}

function isGone(error: unknown): boolean {
  return isApiError(error) && (error.status === 404 || error.status === 410);
}

/**
 * `GET /loads/<reference_number>`. A 410/404 means the load was deleted (or never existed): the
 * last state is looked up with the list endpoint (`isIncludeDeleted`), which returns exactly the
 * record polling will deliver — so the tombstone has the same content hash and polling adds no
 * second row. If the list does not have it either, a minimal tombstone still tells the ERP.
 */
export async function refreshLoad(
  client: ApiClient,
  ref: string,
  options: { includeChargeSets?: boolean; includeVendorPay?: boolean; loadId: string | null; occurredAt: string },
  signal: AbortSignal,
): Promise<Refreshed> {
  try {
    const load = await getLoad(client, ref, { includeChargeSets: options.includeChargeSets || undefined, includeVendorPay: options.includeVendorPay || undefined }, signal);
    return { records: [load as RawRecord], afterCommit: [] };
  } catch (error) {
    if (!isGone(error)) throw error;
  }
  const page = await listLoads(
    client,
    client.variant === 'main'
      ? { reference_numbers: [ref], isIncludeDeleted: true, includeChargeSets: options.includeChargeSets || undefined, includeVendorPay: options.includeVendorPay || undefined }
      : { reference_numbers: [ref], isIncludeDeleted: true },
    signal,
  );
  const last = (page.items as RawRecord[]).find((r) => r.reference_number === ref);
  if (last && last.isDeleted === true) return { records: [last], afterCommit: [] };
  const tombstone: RawRecord = { reference_number: ref, isDeleted: true, updatedAt: options.occurredAt };
  if (options.loadId) tombstone._id = options.loadId;
  return { records: [tombstone], afterCommit: [] };
}

/**
 * `GET /invoices/<load reference>` — the gap-fill path that also returns invoices the list omits
 * (design §2.4). The invoice is recorded in the invoice index like a polled one. A 404
 * (invoice not there yet) leaves the load as an invoice candidate for the invoices stream.
 */
export async function refreshInvoice(client: ApiClient, ref: string, includePaymentHistory: boolean, signal: AbortSignal): Promise<Refreshed> {
  try {
    const invoice = (await getInvoice(client, ref, { includePaymentHistory }, signal)) as RawRecord;
    const facts = invoiceFacts(invoice);
    return { records: [invoice], afterCommit: [(side) => side.recordInvoices([facts])] };
  } catch (error) {
    if (!isGone(error)) throw error;
    return { records: [], afterCommit: [async (side) => void (await side.addInvoiceCandidates([ref], 'invoice webhook'))] };
  }
}

/**
 * `GET /load-document/?reference_number=&doc_type=` for the type the event names: every document
 * of that type on the load, as `loadDocuments` records (see streams/load-documents.ts).
 */
export async function refreshDocuments(client: ApiClient, ref: string, type: string, loadId: string | null, signal: AbortSignal): Promise<Refreshed> {
  const documents = await listLoadDocuments(client, ref, type, signal);
  return {
    records: documents.map((d) => ({
      document_key: `${ref}|${d.type}|${d.url}`,
      reference_number: ref,
      load_id: loadId,
      type: d.type,
      url: d.url,
    })),
    afterCommit: [],
  };
}

/**
 * The files of the documents of one type on a load (`documentFiles` stream): the listing
 * `GET /load-document/?reference_number=&doc_type=` compared with the stored documents of that
 * type — new files are downloaded and stored, documents no longer listed become tombstones. A
 * 404/410 means the load is gone: every stored document of it becomes a tombstone.
 */
export async function refreshDocumentFiles(ctx: DocumentFilesContext, side: SyncSideStore, ref: string, type: string, loadId: string | null, signal: AbortSignal): Promise<Refreshed> {
  let view: DocumentObservation;
  try {
    const listed = await listLoadDocuments(ctx.client, ref, type, signal);
    const current = listed.flatMap((d) => (typeof d.type === 'string' && typeof d.url === 'string' && d.url !== '' ? [documentRef(ref, loadId, { type: d.type, url: d.url })] : []));
    view = { referenceNumber: ref, current, type, asOf: ctx.client.clock.now().toISOString() };
  } catch (error) {
    if (!isGone(error)) throw error;
    view = { referenceNumber: ref, current: [], asOf: null };
  }
  return documentChanges(ctx, side, [view], signal);
}
