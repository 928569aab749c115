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
import { loadBillingSignature } from './load-billing-signature.js';
import { isInvoicedLoadStatus, readLoadPages, type LoadPagesCursor } from './load-pages.js';
import { REMOVED_MARKER } from './snapshot.js';

/**
 * The loads change feed (design §2.4): a load's updatedAt moves when its charges, payments or
 * invoices change, and `GET /loads` filters by updatedAt where `GET /invoices` cannot. So the
 * feed reads the loads changed since the last pass (only statuses an invoice can hang on, and
 * works whether or not the `loads` stream is synced), and fetches the invoices of exactly those
 * loads: batched with the list's `invoiceNumbers` filter (a page of loads → one request per
 * listing), single `GET /invoices/<ref>` only for a load whose invoice the list did not return
 * (the list omits invoices spanning several charge sets) — and only when the load's billing
 * fields changed (load-billing-signature.ts): a load changes far more often than its invoice.
 * Cost follows changes, not the ledger.
 */
export const FEED_LOAD_STATUSES = ['COMPLETED', 'BILLING', 'PARTIAL_PAID', 'FULL_PAID'];

/** `invoiceNumbers` look-ups are bounded (unbounded queries omit data) but must reach any billing date. */
const LOOKUP_FROM = '2000-01-01T00:00:00.000Z';
const LOOKUP_AHEAD_MS = 86_400_000;
/** Fewer numbers than a page holds: a load may have several invoices (voided, combined, sub-customer), and the answer should fit one page. */
const NUMBERS_PER_REQUEST = 40;
/**
 * Due loads collected before their invoices are fetched: several requests' worth, so the last,
 * partly filled request of each flush (and the sub-customer listing's one) is paid rarely.
 */
const DUE_PER_FLUSH = 5 * NUMBERS_PER_REQUEST;
/**
 * Feed pages held before their invoices are fetched and committed: bounds what a crash repeats
 * (at most this many pages read again, once), while pages of loads re-read through the lookback
 * or a brokerage day window — most of them already settled — do not force a look-up each.
 */
const MAX_PENDING_PAGES = 200;

interface ChangedLoad {
  ref: string;
  updatedAt: string;
  invoiced: boolean;
  /** Changed before the feed started: its invoice is current if known (see `feedCatchUpUntil`). */
  caughtUp?: boolean;
  /** Of its billing fields now, and when its invoices were last settled (null: unknown). */
  signature: string;
  previousSignature?: string | null;
}

export async function* readChangeFeed(
  env: StreamEnv<InvoiceOptions>,
  start: InvoiceCursor,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<InvoiceCursor>, InvoiceCursor> {
  let state = start;
  const until = state.feedCatchUpUntil ? Date.parse(state.feedCatchUpUntil) : -Infinity;
  // Loads of several feed pages are collected until they fill an `invoiceNumbers` request; the
  // cursor of those pages is committed only with the invoices fetched for them.
  let pending: { seen: ChangedLoad[]; due: ChangedLoad[]; pages: number; cursor: LoadPagesCursor | null; batchId: string } = { seen: [], due: [], pages: 0, cursor: null, batchId: '' };
  const flush = async (): Promise<Chunk<InvoiceCursor>> => {
    const fetched = await fetchInvoicesOfLoads(env, pending.due, signal);
    const cursor = pending.cursor!;
    // Past the catch-up instant once a range completed beyond it.
    const reached = cursor.window === null ? cursor.highWater : null;
    const caughtUp = reached !== null && Date.parse(reached) >= until;
    state = { ...state, feed: cursor, ...(caughtUp && state.feedCatchUpUntil ? { feedCatchUpUntil: null } : {}) };
    const seen = pending.seen;
    const chunk: Chunk<InvoiceCursor> = {
      records: fetched.records,
      cursor: state,
      batchId: `feed_${pending.batchId}`,
      pages: pending.pages + fetched.requests,
      // Load elements that failed their schema are the loads stream's to report; invoices are ours.
      rejected: fetched.rejected,
      afterCommit: [
        ...bookkeeping(fetched.records),
        ...(fetched.removed.length > 0 ? [(side: SyncSideStore) => side.recordInvoices(fetched.removed)] : []),
        ...(fetched.candidates.length > 0 ? [async (side: SyncSideStore) => void (await side.addInvoiceCandidates(fetched.candidates, 'loads change feed'))] : []),
        (side: SyncSideStore) => side.rememberFeedLoads(seen),
      ],
    };
    pending = { seen: [], due: [], pages: 0, cursor: null, batchId: '' };
    return chunk;
  };
  for await (const chunk of readLoadPages('invoices', env, state.feed, plan, signal, { status: FEED_LOAD_STATUSES })) {
    if (chunk.rejected.length > 0) {
      // Quarantined by the loads stream when it is synced; here they can only be reported.
      env.logger.warn({ loads: chunk.rejected.slice(0, 5).map((r) => r.problem) }, `invoices change feed: ${chunk.rejected.length} load(s) failed their schema; their invoices are left to the sweep`);
    }
    const loads: ChangedLoad[] = chunk.records.map((r) => {
      const updatedAt = stringField(r, 'updatedAt') ?? '';
      return { ref: String(r.reference_number), updatedAt, invoiced: isInvoicedLoadStatus(r.status), caughtUp: Date.parse(updatedAt) <= until, signature: loadBillingSignature(r) };
    });
    const fresh = await env.side.feedLoadsToFetch(loads);
    // Only loads an invoice hangs on (billed, or with a known invoice) count towards a request.
    const linked = await env.side.invoicesOfLoads(fresh.map((l) => l.ref));
    const due = fresh.filter((l) => l.invoiced || linked.has(l.ref));
    pending = {
      seen: [...pending.seen, ...fresh],
      due: [...pending.due.filter((l) => !due.some((d) => d.ref === l.ref)), ...due],
      pages: pending.pages + chunk.pages,
      cursor: chunk.cursor,
      batchId: pending.batchId || chunk.batchId,
    };
    // A request's worth of loads, or enough pages that a crash repeats little; not at every window
    // end (brokerage reads day windows: a flush per day would cost a request per listing per day).
    if (pending.due.length >= DUE_PER_FLUSH || pending.pages >= MAX_PENDING_PAGES) yield await flush();
  }
  if (pending.cursor) yield await flush();
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
export async function fetchInvoicesOfLoads(env: StreamEnv<InvoiceOptions>, changed: readonly ChangedLoad[], signal: AbortSignal): Promise<FetchedInvoices> {
  const out: FetchedInvoices = { records: [], rejected: [], requests: 0, removed: [], candidates: [] };
  let loads = changed;
  if (loads.length === 0) return out;
  const linked = await env.side.invoicesOfLoads(loads.map((l) => l.ref));
  const known = (ref: string) => linked.get(ref) ?? [];
  const hasLive = (ref: string) => known(ref).some((k) => k.kind !== 'subCustomer' && !k.deleted);
  // Loads from before the feed started need a look-up only when their invoice is unknown.
  loads = loads.filter((l) => !l.caughtUp || (l.invoiced && !hasLive(l.ref)));
  if (loads.length === 0) return out;
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
    // Known live invoices of the load the list did not return at all (neither live nor voided).
    let unreturned = known(ref).filter((k) => k.kind !== 'subCustomer' && !k.deleted && !returned.has(k.invoiceId));
    if (covered.has(ref)) {
      // Another live invoice of the load came back, yet a primary one known before did not: it was
      // replaced (a rebill voids it and creates a new one) or the list omits it (several charge
      // sets). The load's own invoice tells which: a load has one primary invoice at a time.
      unreturned = unreturned.filter((k) => k.kind === 'primary');
      if (unreturned.length === 0) continue;
    } else if (!byRef.get(ref)?.invoiced && unreturned.length === 0) continue;
    else if (unreturned.length > 0 && unreturned.every((k) => k.kind === 'primary') && billingUnchanged(byRef.get(ref))) {
      // The list omits this load's invoice (several charge sets) and nothing on the load that
      // mirrors an invoice moved: an operational change. Fetching it would return what we have.
      continue;
    }
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

function billingUnchanged(load: ChangedLoad | undefined): boolean {
  return load !== undefined && load.previousSignature != null && load.previousSignature === load.signature;
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
