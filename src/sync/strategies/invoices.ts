import { z } from 'zod';
import { getInvoice, listInvoices } from '../../api/endpoints/invoices.js';
import { ApiError } from '../../api/errors.js';
import { offsetPages } from '../../api/paging.js';
import type { Invoice } from '../../api/schemas/resources.js';
import { backoffCeiling } from '../../util/backoff.js';
import type { SyncSideStore, InvoiceFacts } from '../../state/stores/sync-side-store.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { readClosedWindows, windowCursorSchema } from './closed-window.js';

/**
 * Invoices have no updatedAt filter (spec §4.2) and payments change them long after their billing
 * date (design §2.4). Three passes each run:
 * 1. new invoices by billing-date windows (always bounded: unbounded queries omit data);
 * 2. re-poll of every invoice not yet FULL_PAID: the open billing range is listed with the open
 *    statuses; an open invoice missing from that list (it became final, or the list omits it,
 *    as it has been seen to for invoices spanning several charge sets) is fetched on its own;
 * 3. gap-fill: loads that should have an invoice (status BILLING or later, `invoice#*` events)
 *    and whose invoice was never seen are looked up with `GET /invoices/<reference_number>`.
 */
export const invoiceCursorSchema = z.strictObject({
  mode: z.literal('invoices'),
  billing: windowCursorSchema,
});
export type InvoiceCursor = z.infer<typeof invoiceCursorSchema>;

export interface InvoiceOptions {
  includePaymentHistory: boolean;
}

const OPEN_STATUSES = ['BILLING', 'REBILLING', 'PARTIAL_PAID', 'APPROVED'];
const OPEN_BATCH = 500;
const CANDIDATES_PER_RUN = 500;
const CANDIDATE_MAX_ATTEMPTS = 12;
/** A missed gap-fill lookup is tried again after 5 min, 10 min, … at most a day later. */
const GAP_FILL_BASE_MS = 5 * 60_000;
const GAP_FILL_MAX_MS = 24 * 3_600_000;

export function invoiceFacts(invoice: RawRecord): InvoiceFacts {
  const entries = Array.isArray(invoice.invoice) ? (invoice.invoice as Array<Record<string, unknown>>) : [];
  const refs = entries.map((e) => e?.load_reference_number).filter((r): r is string => typeof r === 'string' && r !== '');
  const status = typeof invoice.status === 'string' ? invoice.status : typeof entries[0]?.status === 'string' ? (entries[0].status as string) : null;
  const billingDate = typeof invoice.billingDate === 'string' ? invoice.billingDate : typeof entries[0]?.billingDate === 'string' ? (entries[0].billingDate as string) : null;
  return { invoiceId: String(invoice._id), status, billingDate, loadReferenceNumbers: [...new Set(refs)] };
}

function bookkeeping(records: RawRecord[]): Array<(side: SyncSideStore) => Promise<void>> {
  if (records.length === 0) return [];
  const facts = records.map(invoiceFacts);
  return [(side) => side.recordInvoices(facts)];
}

export async function* readInvoices(
  env: StreamEnv<InvoiceOptions>,
  cursor: InvoiceCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<InvoiceCursor>> {
  const includePaymentHistory = env.options.includePaymentHistory;
  let billing = cursor?.billing;

  // 1. New invoices by billing date.
  const windows = readClosedWindows(
    'invoices',
    {
      paged: true,
      key: (r) => String(r._id),
      fetch: ({ from, to, skip, limit, signal: s }) =>
        listInvoices(env.client, { billingFrom: from, billingTo: to, skip, limit: limit ?? env.pageSize, sortBy: { billingDate: 1 }, includePaymentHistory }, s) as never,
    },
    env,
    billing,
    plan,
    signal,
  );
  for await (const chunk of windows) {
    billing = chunk.cursor;
    yield { ...chunk, cursor: { mode: 'invoices', billing }, afterCommit: bookkeeping(chunk.records) };
  }
  if (plan.mode === 'backfill') return;
  const settled: InvoiceCursor = { mode: 'invoices', billing: billing ?? { mode: 'window', highWater: null, spanMs: null, window: null } };

  // 2. Re-poll invoices that are not final yet, all of them, in batches (oldest first).
  let after: { billingDate: string; invoiceId: string } | undefined;
  for (;;) {
    const open = await env.side.openInvoices(OPEN_BATCH, after);
    if (open.length === 0) break;
    yield* repollOpen(env, open, settled, includePaymentHistory, signal);
    const last = open[open.length - 1]!;
    if (open.length < OPEN_BATCH || last.billingDate === null) break;
    after = { billingDate: last.billingDate, invoiceId: last.invoiceId };
  }

  // 3. Gap-fill loads that should have an invoice.
  const candidates = await env.side.dueInvoiceCandidates(CANDIDATES_PER_RUN);
  for (const candidate of candidates) {
    try {
      const invoice = await getInvoice(env.client, candidate.loadReferenceNumber, { includePaymentHistory }, signal);
      const record = invoice as RawRecord;
      yield {
        records: [record],
        cursor: settled,
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
        cursor: settled,
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

async function* repollOpen(
  env: StreamEnv<InvoiceOptions>,
  open: Awaited<ReturnType<SyncSideStore['openInvoices']>>,
  cursor: InvoiceCursor,
  includePaymentHistory: boolean,
  signal: AbortSignal,
): AsyncGenerator<Chunk<InvoiceCursor>> {
  const dates = open.map((o) => o.billingDate).filter((d): d is string => !!d).sort();
  const stillOpen = new Set<string>();
  if (dates.length > 0) {
    const billingFrom = dates[0]!;
    const billingTo = dates[dates.length - 1]!;
    const pages = offsetPages(
      (skip, limit) =>
        listInvoices(env.client, { billingFrom, billingTo, status: OPEN_STATUSES, skip, limit, sortBy: { billingDate: 1 }, includePaymentHistory }, signal),
      { limit: env.pageSize, signal },
    );
    let n = 0;
    for await (const page of pages) {
      for (const invoice of page.items) stillOpen.add(String(invoice._id));
      const records = page.items as RawRecord[];
      yield { records, cursor, batchId: `repoll_${billingFrom}_${billingTo}_${n}`, pages: 1, rejected: page.rejected, afterCommit: bookkeeping(records) };
      n += 1;
    }
  }
  // Open invoices the list did not show: fetched one by one (final now, or omitted by the list).
  for (const invoice of open) {
    if (stillOpen.has(invoice.invoiceId)) continue;
    const ref = invoice.loadReferenceNumbers[0];
    if (!ref) continue;
    let fetched: Invoice;
    try {
      fetched = await getInvoice(env.client, ref, { includePaymentHistory }, signal);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 404 || error.status === 410)) {
        env.logger.warn({ invoice: invoice.invoiceId, load: ref, status: error.status }, 'open invoice no longer found; keeping it open');
        continue;
      }
      throw error;
    }
    const record = fetched as RawRecord;
    yield { records: [record], cursor, batchId: `repoll_${invoice.invoiceId}`, pages: 1, rejected: [], afterCommit: bookkeeping([record]) };
  }
}
