import { getInvoice } from '../../api/endpoints/invoices.js';
import { ApiError } from '../../api/errors.js';
import { backoffCeiling } from '../../util/backoff.js';
import type { Chunk, RunPlan, StreamEnv } from '../stream-definition.js';
import { ensureServerClock } from '../window-plan.js';
import { readClosedWindows, type WindowCursor } from './closed-window.js';
import type { InvoiceCursor } from './invoice-cursor.js';
import { readChangeFeed } from './invoice-feed.js';
import { bookkeeping, listPage, listings, type InvoiceListing, type InvoiceOptions } from './invoice-lists.js';
import { invoiceKey } from './invoice-key.js';
import { sweepInvoices } from './invoice-sweep.js';
import { loadPagesCursorAt, type LoadPagesCursor } from './load-pages.js';

export { invoiceCursorSchema, type InvoiceCursor } from './invoice-cursor.js';
export { invoiceFacts } from './invoice-key.js';
export type { InvoiceOptions } from './invoice-lists.js';

/**
 * Invoices have no updatedAt filter (spec §4.2) and change long after their billing date:
 * payments, charges added to a paid invoice (rebills), combination, voiding (design §2.4). A pass:
 * 1. new invoices by billing-date windows (always bounded: unbounded queries omit data), in both
 *    listings — loads' own and combined invoices, and sub-customer invoices — voided included;
 * 2. the loads change feed: invoices of the loads changed since the last pass (invoice-feed.ts);
 * 3. gap-fill: loads that should have an invoice (status BILLING or later, `invoice#*` events)
 *    and whose invoice was never seen are looked up with `GET /invoices/<reference_number>`;
 * 4. a budgeted sweep of recently billed invoices (invoice-sweep.ts).
 * No step re-reads invoices because they exist: the cost of a pass follows what changed.
 */
const CANDIDATES_PER_RUN = 500;
const CANDIDATE_MAX_ATTEMPTS = 12;
/** A missed gap-fill lookup is tried again after 5 min, 10 min, … at most a day later. */
const GAP_FILL_BASE_MS = 5 * 60_000;
const GAP_FILL_MAX_MS = 24 * 3_600_000;

const NO_WINDOW: WindowCursor = { mode: 'window', highWater: null, spanMs: null, window: null };

export async function* readInvoices(
  env: StreamEnv<InvoiceOptions>,
  cursor: InvoiceCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<InvoiceCursor>> {
  let state: InvoiceCursor = cursor ?? { mode: 'invoices', billing: NO_WINDOW };
  const incremental = plan.mode !== 'backfill';
  let feedStarted = false;
  if (incremental && env.options.loadsChangeFeed && state.feed === undefined) {
    // The feed reads every load from `initialFrom` once, to find loads whose invoice the list
    // omits; the billing windows read the others' invoices in this run, so up to now (or, for a
    // checkpoint from before the feed, up to its last completed range) only unknown ones are fetched.
    await ensureServerClock(env.client, signal);
    const catchUpUntil = state.billing.highWater ?? new Date(env.client.clock.now().getTime()).toISOString();
    state = { ...state, feed: feedStart(env), feedCatchUpUntil: catchUpUntil };
    feedStarted = true;
  }

  for (const listing of listings(env.options)) {
    const field = listing === 'main' ? 'billing' : 'subBilling';
    const windows = readClosedWindows('invoices', windowSource(env, listing), env, state[field], windowPlan(env, plan), signal);
    for await (const chunk of windows) {
      state = { ...state, [field]: chunk.cursor };
      yield { ...chunk, batchId: `${listing}_${chunk.batchId}`, cursor: state, afterCommit: bookkeeping(chunk.records) };
      feedStarted = false;
    }
  }
  if (!incremental) return;
  // Commit where the feed starts even when nothing else moved, or the next run would start it later.
  if (feedStarted) yield { records: [], cursor: state, batchId: 'feed_start', pages: 0, rejected: [] };

  if (env.options.loadsChangeFeed) state = yield* readChangeFeed(env, state, plan, signal);
  yield* gapFill(env, state, signal);
  yield* sweepInvoices(env, state, signal);
}

/**
 * The lookback re-reads recent billing windows for invoices that became visible late. With the
 * loads change feed on, the billing windows need none: a late invoice's load is re-read by the
 * feed's own lookback (its status or updatedAt moved when it was billed) and its invoice fetched
 * there; a late sub-customer invoice (unknown to the feed until listed) is left to the sweep.
 * Re-reading every invoice billed in the last minutes each pass cost more requests than all the
 * changes together (issue 12: at 20,000 loads, 8 of 25 requests a pass).
 */
function windowPlan(env: StreamEnv<InvoiceOptions>, plan: RunPlan): RunPlan {
  // Nor the lag's cover (lagCover is the lookback moved into the lag).
  return plan.mode !== 'backfill' && env.options.loadsChangeFeed ? { ...plan, lookbackMs: 0, lagCover: false } : plan;
}

function feedStart(env: StreamEnv<InvoiceOptions>): LoadPagesCursor {
  return loadPagesCursorAt(env.variant, null);
}

function windowSource(env: StreamEnv<InvoiceOptions>, listing: InvoiceListing) {
  return {
    paged: true,
    key: invoiceKey,
    fetch: ({ from, to, skip, limit, signal }: { from: string; to: string; skip: number; limit: number | null; signal: AbortSignal }) =>
      listPage(env.client, env.options, listing, { billingFrom: from, billingTo: to, skip, limit: limit ?? env.pageSize, sortBy: { billingDate: 1 } }, signal),
  };
}

/** Loads that should have an invoice the API has not shown yet: one GET each, with a growing delay after a miss. */
async function* gapFill(env: StreamEnv<InvoiceOptions>, cursor: InvoiceCursor, signal: AbortSignal): AsyncGenerator<Chunk<InvoiceCursor>> {
  const candidates = await env.side.dueInvoiceCandidates(CANDIDATES_PER_RUN);
  for (const candidate of candidates) {
    try {
      const record = await getInvoice(env.client, candidate.loadReferenceNumber, { includePaymentHistory: env.options.includePaymentHistory }, signal);
      yield {
        records: [record],
        cursor,
        batchId: `gapfill_${candidate.loadReferenceNumber}`,
        pages: 1,
        rejected: [],
        afterCommit: [...bookkeeping([record]), (side) => side.removeInvoiceCandidate(candidate.loadReferenceNumber)],
      };
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 404 && error.status !== 410)) throw error;
      const attempts = candidate.attempts + 1;
      // Deterministic: a missing invoice is a slow business fact, not a crowd to spread out.
      const delay = backoffCeiling({ attempt: candidate.attempts, baseMs: GAP_FILL_BASE_MS, maxMs: GAP_FILL_MAX_MS });
      yield {
        records: [],
        cursor,
        batchId: `gapfill_${candidate.loadReferenceNumber}_miss`,
        pages: 1,
        rejected: [],
        afterCommit: [
          attempts >= CANDIDATE_MAX_ATTEMPTS
            ? (side) => side.removeInvoiceCandidate(candidate.loadReferenceNumber)
            : (side) => side.postponeInvoiceCandidate(candidate.loadReferenceNumber, `HTTP ${error.status}: ${error.serverMessage}`, delay),
        ],
      };
    }
  }
}
