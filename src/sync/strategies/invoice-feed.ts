import { getInvoice } from '../../api/endpoints/invoices.js';
import { isApiError } from '../../api/errors.js';
import { offsetPages, type RejectedItem } from '../../api/paging.js';
import type { InvoiceFacts, LinkedInvoice, SyncSideStore } from '../../state/stores/sync-side-store.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { stringField } from '../streams/common.js';
import { iso } from '../time.js';
import { invoiceDeleted, invoiceKey, invoiceKind, invoiceLoadReferences } from './invoice-key.js';
import { bookkeeping, listings, listPage, type InvoiceListing, type InvoiceOptions } from './invoice-lists.js';
import type { InvoiceCursor } from './invoice-cursor.js';
import { isInvoicedLoadStatus, readLoadPages } from './load-pages.js';
import { REMOVED_MARKER } from './snapshot.js';

/**
 * The loads change feed (design §2.4): a load's updatedAt moves when its charges, payments or
 * invoices change, and `GET /loads` filters by updatedAt where `GET /invoices` cannot. So the
 * feed reads the loads changed since the last pass (only statuses an invoice can hang on, and
 * works whether or not the `loads` stream is synced), and fetches the invoices of exactly those
 * loads: batched with the list's `invoiceNumbers` filter (a page of loads → one request per
 * listing), single `GET /invoices/<ref>` only for a load whose invoice the list did not return
 * (the list omits invoices spanning several charge sets). Cost follows changes, not the ledger.
 */
export const FEED_LOAD_STATUSES = ['COMPLETED', 'BILLING', 'PARTIAL_PAID', 'FULL_PAID'];

/** `invoiceNumbers` look-ups are bounded (unbounded queries omit data) but must reach any billing date. */
const LOOKUP_FROM = '2000-01-01T00:00:00.000Z';
const LOOKUP_AHEAD_MS = 86_400_000;
const NUMBERS_PER_REQUEST = 50;

interface ChangedLoad {
  ref: string;
  updatedAt: string;
  invoiced: boolean;
}

export async function* readChangeFeed(
  env: StreamEnv<InvoiceOptions>,
  start: InvoiceCursor,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<InvoiceCursor>, InvoiceCursor> {
  let state = start;
  const pages = readLoadPages('invoices', env, state.feed, plan, signal, { status: FEED_LOAD_STATUSES });
  for await (const chunk of pages) {
    const loads: ChangedLoad[] = chunk.records.map((r) => ({ ref: String(r.reference_number), updatedAt: stringField(r, 'updatedAt') ?? '', invoiced: isInvoicedLoadStatus(r.status) }));
    const due = (await env.side.feedLoadsToFetch(loads)) as ChangedLoad[];
    const fetched = await fetchInvoicesOfLoads(env, due, signal);
    state = { ...state, feed: chunk.cursor };
    yield {
      records: fetched.records,
      cursor: state,
      batchId: `feed_${chunk.batchId}`,
      pages: chunk.pages + fetched.requests,
      // Load elements that failed their schema are the loads stream's to report; invoices are ours.
      rejected: fetched.rejected,
      afterCommit: [
        ...bookkeeping(fetched.records),
        ...(fetched.removed.length > 0 ? [(side: SyncSideStore) => side.recordInvoices(fetched.removed)] : []),
        ...(fetched.candidates.length > 0 ? [async (side: SyncSideStore) => void (await side.addInvoiceCandidates(fetched.candidates, 'loads change feed'))] : []),
        (side: SyncSideStore) => side.rememberFeedLoads(due),
      ],
    };
  }
  return state;
}

export interface FetchedInvoices {
  records: RawRecord[];
  rejected: RejectedItem[];
  requests: number;
  /** Index facts of invoices delivered as tombstones because the API no longer has them. */
  removed: InvoiceFacts[];
  /** Loads whose status says an invoice exists but the API returned none (yet): gap-fill. */
  candidates: string[];
}

/**
 * Every invoice of the given loads: the `main` listing for loads billed or with a known primary or
 * combined invoice, the `sub` listing for loads with a known sub-customer invoice (new ones arrive
 * by billing date), then the single GET for loads whose invoice the list did not return.
 */
export async function fetchInvoicesOfLoads(env: StreamEnv<InvoiceOptions>, loads: readonly ChangedLoad[], signal: AbortSignal): Promise<FetchedInvoices> {
  const out: FetchedInvoices = { records: [], rejected: [], requests: 0, removed: [], candidates: [] };
  if (loads.length === 0) return out;
  const linked = await env.side.invoicesOfLoads(loads.map((l) => l.ref));
  const known = (ref: string) => linked.get(ref) ?? [];
  const want: Record<InvoiceListing, string[]> = {
    main: loads.filter((l) => l.invoiced || known(l.ref).some((k) => k.kind !== 'subCustomer')).map((l) => l.ref),
    sub: loads.filter((l) => known(l.ref).some((k) => k.kind === 'subCustomer')).map((l) => l.ref),
  };
  const billingTo = iso(env.client.clock.now().getTime() + LOOKUP_AHEAD_MS);
  for (const listing of listings(env.options)) {
    for (let i = 0; i < want[listing].length; i += NUMBERS_PER_REQUEST) {
      const invoiceNumbers = want[listing].slice(i, i + NUMBERS_PER_REQUEST);
      const pages = offsetPages(
        (skip, limit) => listPage(env.client, env.options, listing, { invoiceNumbers, billingFrom: LOOKUP_FROM, billingTo, sortBy: { billingDate: 1 }, skip, limit }, signal),
        { limit: env.pageSize, signal },
      );
      for await (const page of pages) {
        out.requests += 1;
        out.records.push(...page.items);
        out.rejected.push(...page.rejected);
      }
    }
  }

  const returned = new Set(out.records.map(invoiceKey));
  const covered = new Set(out.records.filter((r) => !invoiceDeleted(r) && invoiceKind(r) !== 'subCustomer').flatMap(invoiceLoadReferences));
  const byRef = new Map(loads.map((l) => [l.ref, l]));
  for (const ref of want.main) {
    if (covered.has(ref)) continue;
    // Known live invoices of the load the list did not return at all (neither live nor voided).
    const unreturned = known(ref).filter((k) => k.kind !== 'subCustomer' && !k.deleted && !returned.has(k.invoiceId));
    if (!byRef.get(ref)?.invoiced && unreturned.length === 0) continue;
    const single = await getSingle(env, ref, signal);
    out.requests += 1;
    if (single) {
      out.records.push(single);
      returned.add(invoiceKey(single));
    } else if (byRef.get(ref)?.invoiced) {
      out.candidates.push(ref);
    }
    // The load's current invoice is another one (or none): the one known before is gone.
    for (const gone of unreturned.filter((k) => !returned.has(k.invoiceId))) tombstone(out, gone, ref);
  }
  return out;
}

async function getSingle(env: StreamEnv<InvoiceOptions>, ref: string, signal: AbortSignal): Promise<RawRecord | null> {
  try {
    return (await getInvoice(env.client, ref, { includePaymentHistory: env.options.includePaymentHistory }, signal)) as RawRecord;
  } catch (error) {
    if (isApiError(error) && (error.status === 404 || error.status === 410)) return null;
    throw error;
  }
}

function tombstone(out: FetchedInvoices, gone: LinkedInvoice, ref: string): void {
  if (out.removed.some((r) => r.invoiceId === gone.invoiceId)) return;
  out.records.push({ [REMOVED_MARKER]: true, key: gone.invoiceId });
  out.removed.push({ invoiceId: gone.invoiceId, kind: gone.kind, status: null, billingDate: null, deleted: true, loadReferenceNumbers: [ref] });
}
