import type { Chunk, StreamEnv } from '../stream-definition.js';
import { iso } from '../time.js';
import type { InvoiceCursor, SweepCursor } from './invoice-cursor.js';
import { bookkeeping, listPage, type InvoiceOptions } from './invoice-lists.js';

const DAY_MS = 86_400_000;

/**
 * The safety net under the change signals: a budgeted sweep that re-reads every invoice billed
 * in the last `sweepDays` days (both listings, voided ones included), at most
 * `sweepMaxRequestsPerPass` requests per pass, one cycle per `sweepPeriod`. Unchanged invoices
 * cost requests but no writes (their content hash is known). A cycle's bounds are fixed when it
 * starts and invoices keep their billing date, so offset paging over it is stable.
 */
export async function* sweepInvoices(env: StreamEnv<InvoiceOptions>, start: InvoiceCursor, signal: AbortSignal): AsyncGenerator<Chunk<InvoiceCursor>, InvoiceCursor> {
  const { sweepDays, sweepPeriod, sweepMaxRequestsPerPass, subCustomerInvoices } = env.options;
  if (sweepDays <= 0 || sweepMaxRequestsPerPass <= 0) return start;
  const now = env.client.clock.now().getTime();
  const last = start.sweep ?? null;
  let sweep: SweepCursor =
    !last || (last.done && now - Date.parse(last.startedAt) >= sweepPeriod)
      ? { listing: 'main', from: iso(now - sweepDays * DAY_MS), to: iso(now), skip: 0, startedAt: iso(now), done: false }
      : last;
  let state = start;
  for (let budget = sweepMaxRequestsPerPass; !sweep.done && budget > 0; budget -= 1) {
    const at: SweepCursor = sweep;
    const page = await listPage(env.client, env.options, at.listing, { billingFrom: at.from, billingTo: at.to, skip: at.skip, limit: env.pageSize, sortBy: { billingDate: 1 } }, signal);
    const received = page.items.length + page.rejected.length;
    const end: boolean = received < env.pageSize || (page.count !== undefined && at.skip + received >= page.count);
    sweep = !end ? { ...at, skip: at.skip + received } : at.listing === 'main' && subCustomerInvoices ? { ...at, listing: 'sub', skip: 0 } : { ...at, done: true };
    state = { ...state, sweep };
    yield { records: page.items, cursor: state, batchId: `sweep_${at.startedAt}_${at.listing}_${at.skip}`, pages: 1, rejected: page.rejected, afterCommit: bookkeeping(page.items) };
  }
  return state;
}
