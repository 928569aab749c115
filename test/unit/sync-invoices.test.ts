import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateTables } from '../../src/state/tables.js';
import { SyncSideStore } from '../../src/state/stores/sync-side-store.js';
import { readInvoices, type InvoiceCursor, type InvoiceOptions } from '../../src/sync/strategies/invoices.js';
import { invoiceKey, markSubCustomer } from '../../src/sync/strategies/invoice-key.js';
import type { RunPlan } from '../../src/sync/stream-definition.js';
import { apiError, FakeApi, type RecordedCall } from '../helpers/fake-api.js';
import { freshStateDatabase } from '../helpers/state-db.js';
import { at, collect, env, HOUR, plan, T0 } from '../helpers/strategy-fakes.js';

/**
 * Invoices (design §2.4): billing-date windows, re-poll of invoices not yet FULL_PAID, and
 * gap-fill through `GET /invoices/<load reference>`. The API is a scripted fake holding invoices
 * in memory; the side tables (open invoices, candidates) are a real SQLite state database, and
 * each chunk's afterCommit runs before the next chunk is asked for, as the stream runner does.
 */
const SERVER_NOW = T0 + 48 * HOUR;
const OPEN = ['BILLING', 'REBILLING', 'PARTIAL_PAID', 'APPROVED'];

interface Inv {
  _id: string;
  status: string;
  billingDate: string;
  invoice: Array<{ load_reference_number: string; status: string; billingDate: string }>;
}

function inv(id: string, ref: string, status: string, billingMs: number): Inv {
  return { _id: id, status, billingDate: at(billingMs), invoice: [{ load_reference_number: ref, status, billingDate: at(billingMs) }] };
}

class InvoiceServer {
  /** What `GET /invoices` shows (the list has been seen to omit some invoices). */
  hiddenFromList = new Set<string>();
  /** Load references whose single GET fails with this status. */
  failSingle = new Map<string, number>();

  constructor(public invoices: Inv[]) {}

  install(api: FakeApi): FakeApi {
    return api
      .on('GET /invoices', (call) => {
        const q = call.query as { billingFrom?: string; billingTo?: string; status?: string[]; skip?: number; limit?: number };
        const lo = q.billingFrom ? Date.parse(q.billingFrom) : -Infinity;
        const hi = q.billingTo ? Date.parse(q.billingTo) : Infinity;
        const matching = this.invoices.filter(
          (i) => !this.hiddenFromList.has(i._id) && Date.parse(i.billingDate) >= lo && Date.parse(i.billingDate) <= hi && (!q.status || q.status.includes(i.status)),
        );
        const skip = q.skip ?? 0;
        return { data: matching.slice(skip, skip + (q.limit ?? 50)), count: matching.length };
      })
      .on('GET /invoices/:reference_number', (call) => {
        const ref = decodeURIComponent(call.path.slice('/invoices/'.length));
        const status = this.failSingle.get(ref);
        if (status) throw apiError(status, 'GET', '/invoices/:reference_number', `no invoice for ${ref}`);
        const found = this.invoices.find((i) => i.invoice.some((e) => e.load_reference_number === ref));
        if (!found) throw apiError(404, 'GET', '/invoices/:reference_number', `no invoice for ${ref}`);
        return { data: found, count: 1 };
      });
  }
}

let db: Kysely<StateTables>;
let nowMs: number;
let side: SyncSideStore;

beforeEach(async () => {
  ({ db } = await freshStateDatabase());
  nowMs = SERVER_NOW;
  side = new SyncSideStore(db, () => new Date(nowMs));
});

afterEach(async () => {
  await db.destroy();
});

const OPTIONS: InvoiceOptions = {
  includePaymentHistory: true,
  subCustomerInvoices: false,
  combinedInvoices: true,
  deletedInvoices: true,
  loadsChangeFeed: false,
  sweepDays: 0,
  sweepPeriod: 7 * 24 * HOUR,
  sweepMaxRequestsPerPass: 0,
};

function run(api: FakeApi, cursor?: InvoiceCursor, p: Partial<RunPlan> = {}, pageSize = 10, options: Partial<InvoiceOptions> = {}) {
  const e = env(api, { ...OPTIONS, ...options }, pageSize, db, () => new Date(nowMs));
  return collect(readInvoices(e, cursor, plan({ maxWindowMs: 24 * HOUR, minWindowMs: HOUR, ...p }), new AbortController().signal), side);
}

/** A cursor whose billing windows are done up to the server's clock: only re-poll and gap-fill run. */
const caughtUp: InvoiceCursor = { mode: 'invoices', billing: { mode: 'window', highWater: at(SERVER_NOW), spanMs: null, window: null } };

function lists(api: FakeApi): RecordedCall[] {
  return api.callsTo('GET /invoices');
}
function singles(api: FakeApi): string[] {
  return api.callsTo('GET /invoices/:reference_number').map((c) => decodeURIComponent(c.path.slice('/invoices/'.length)));
}

async function candidate(ref: string) {
  return db.selectFrom('invoice_candidates').selectAll().where('load_reference_number', '=', ref).executeTakeFirst();
}

describe('readInvoices: billing-date windows', () => {
  it('lists new invoices by bounded billing-date windows and records them in the invoice index', async () => {
    const server = new InvoiceServer([inv('i1', 'L1', 'BILLING', T0 + HOUR), inv('i2', 'L2', 'FULL_PAID', T0 + 30 * HOUR)]);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    const chunks = await run(api);
    const windowCalls = lists(api).filter((c) => c.query.status === undefined);
    // Two 24h windows over the 48h range; every query is bounded on both sides (unbounded queries omit data).
    expect(windowCalls.map((c) => [c.query.billingFrom, c.query.billingTo])).toEqual([
      [at(T0), at(T0 + 24 * HOUR)],
      [at(T0 + 24 * HOUR), at(SERVER_NOW)],
    ]);
    for (const c of windowCalls) expect(c.query).toMatchObject({ sortBy: { billingDate: 1 }, includePaymentHistory: true, skip: 0, limit: 10 });
    expect(chunks.flatMap((c) => c.records.map((r) => r._id))).toContain('i1');
    expect(chunks.flatMap((c) => c.records.map((r) => r._id))).toContain('i2');
    expect(chunks[0]!.cursor.mode).toBe('invoices');
    // i1 is open, i2 is final (the index counts open ones for `status`).
    expect((await side.openInvoices(10)).map((o) => o.invoiceId)).toEqual(['i1']);
  });

  it('does not send includePaymentHistory to brokerage', async () => {
    const server = new InvoiceServer([]);
    const api = server.install(new FakeApi('brokerage', SERVER_NOW));
    await run(api, undefined, { initialFrom: at(SERVER_NOW - HOUR) });
    expect(lists(api)[0]!.query).not.toHaveProperty('includePaymentHistory');
  });

  it('in backfill mode reads billing windows only: no feed, no gap-fill', async () => {
    await side.recordInvoices([{ invoiceId: 'old', status: 'BILLING', billingDate: at(T0), kind: 'primary', deleted: false, loadReferenceNumbers: ['L0'] }]);
    await side.addInvoiceCandidates(['L9'], 'test');
    const server = new InvoiceServer([inv('i1', 'L1', 'BILLING', T0 + HOUR)]);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    await run(api, undefined, { mode: 'backfill', from: at(T0), to: at(T0 + 24 * HOUR) }, 10, { loadsChangeFeed: true });
    expect(api.callsTo('GET /loads')).toEqual([]);
    expect(singles(api)).toEqual([]);
  });
});

describe('readInvoices: gap-fill of loads that should have an invoice', () => {
  it('fetches each due candidate through the single GET, records the invoice and drops the candidate', async () => {
    await side.addInvoiceCandidates(['L7'], 'load status BILLING');
    const server = new InvoiceServer([inv('i7', 'L7', 'BILLING', T0)]);
    server.hiddenFromList.add('i7');
    const api = server.install(new FakeApi('main', SERVER_NOW));
    const chunks = await run(api, caughtUp);
    expect(singles(api)).toEqual(['L7']);
    const gap = chunks.find((c) => c.batchId === 'gapfill_L7')!;
    expect(gap.records.map((r) => r._id)).toEqual(['i7']);
    expect(gap.cursor).toEqual(caughtUp);
    expect(await candidate('L7')).toBeUndefined();
    expect((await side.openInvoices(10)).map((o) => o.invoiceId)).toEqual(['i7']);
  });

  it('postpones a candidate without an invoice with a growing delay', async () => {
    await side.addInvoiceCandidates(['L8'], 'invoice#created event');
    const server = new InvoiceServer([]);
    const api = server.install(new FakeApi('main', SERVER_NOW));

    const chunks = await run(api, caughtUp);
    expect(chunks.map((c) => c.batchId)).toEqual(['gapfill_L8_miss']);
    let c = await candidate('L8');
    expect(c).toMatchObject({ attempts: 1, next_attempt_at: at(nowMs + 5 * 60_000) });
    expect(c!.last_error).toContain('HTTP 404');

    // Not due yet: no request.
    await run(api, caughtUp);
    expect(singles(api)).toEqual(['L8']);

    // Due again after 5 minutes; the next delay doubles.
    nowMs += 5 * 60_000;
    await run(api, caughtUp);
    expect(singles(api)).toEqual(['L8', 'L8']);
    c = await candidate('L8');
    expect(c).toMatchObject({ attempts: 2, next_attempt_at: at(nowMs + 10 * 60_000) });
  });

  it('gives up on a candidate after 12 misses', async () => {
    await side.addInvoiceCandidates(['L8'], 'test');
    await db.updateTable('invoice_candidates').set({ attempts: 11 }).execute();
    const server = new InvoiceServer([]);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    await run(api, caughtUp);
    expect(singles(api)).toEqual(['L8']);
    expect(await candidate('L8')).toBeUndefined();
  });

  it('adds a page of candidates at once, counting only the new ones', async () => {
    await side.recordInvoices([{ invoiceId: 'i1', status: 'FULL_PAID', billingDate: at(T0), kind: 'primary', deleted: false, loadReferenceNumbers: ['L1'] }]);
    expect(await side.addInvoiceCandidates(['L2'], 'test')).toBe(1);
    // L1 has its invoice, L2 is already a candidate, L3 is repeated: two new candidates.
    expect(await side.addInvoiceCandidates(['L1', 'L2', 'L3', 'L3', 'L4'], 'page')).toBe(2);
    expect(await candidate('L1')).toBeUndefined();
    expect(await candidate('L2')).toMatchObject({ reason: 'test' });
    expect(await candidate('L4')).toMatchObject({ reason: 'page' });
    const many = Array.from({ length: 1200 }, (_, i) => `M${i}`);
    expect(await side.addInvoiceCandidates(many, 'bulk')).toBe(1200);
  });

  it('does not look up candidates whose invoice is already known', async () => {
    await side.recordInvoices([{ invoiceId: 'i1', status: 'FULL_PAID', billingDate: at(T0), kind: 'primary', deleted: false, loadReferenceNumbers: ['L1'] }]);
    expect(await side.addInvoiceCandidates(['L1'], 'test')).toBe(0);
    const api = new InvoiceServer([]).install(new FakeApi('main', SERVER_NOW));
    await run(api, caughtUp);
    expect(singles(api)).toEqual([]);
  });
});

describe('readInvoices: the loads change feed', () => {
  /** A checkpoint whose windows and feed are done up to the server clock minus an hour. */
  const fed = (feedFrom: number): InvoiceCursor => ({ ...caughtUp, feed: { mode: 'keyset', highWater: at(feedFrom), window: null }, feedCatchUpUntil: null });

  function withLoads(api: FakeApi, loads: Array<{ reference_number: string; status: string; updatedAt: string }>): FakeApi {
    return api.on('GET /loads', (call) => {
      const q = call.query as { skip?: number; limit?: number };
      const skip = q.skip ?? 0;
      return { data: loads.slice(skip, skip + (q.limit ?? 50)).map((l) => ({ _id: `id-${l.reference_number}`, ...l })) };
    });
  }

  it('fetches the invoices of changed loads with one invoiceNumbers request, and the single GET only for one the list omits', async () => {
    await side.recordInvoices([
      { invoiceId: 'i1', kind: 'primary', status: 'BILLING', billingDate: at(T0), deleted: false, loadReferenceNumbers: ['L1'] },
      { invoiceId: 'i3', kind: 'primary', status: 'BILLING', billingDate: at(T0), deleted: false, loadReferenceNumbers: ['L3'] },
    ]);
    const server = new InvoiceServer([inv('i1', 'L1', 'FULL_PAID', T0), inv('i2', 'L2', 'BILLING', T0), inv('i3', 'L3', 'PARTIAL_PAID', T0)]);
    server.hiddenFromList.add('i3');
    const api = withLoads(server.install(new FakeApi('main', SERVER_NOW)), [
      { reference_number: 'L1', status: 'FULL_PAID', updatedAt: at(SERVER_NOW - 30 * 60_000) },
      { reference_number: 'L2', status: 'BILLING', updatedAt: at(SERVER_NOW - 20 * 60_000) },
      { reference_number: 'L3', status: 'PARTIAL_PAID', updatedAt: at(SERVER_NOW - 10 * 60_000) },
      // Completed, no invoice known: nothing to look up.
      { reference_number: 'L4', status: 'COMPLETED', updatedAt: at(SERVER_NOW - 5 * 60_000) },
    ]);
    const chunks = await run(api, fed(SERVER_NOW - HOUR), {}, 10, { loadsChangeFeed: true });
    const feedLists = lists(api).filter((c) => c.query.invoiceNumbers !== undefined);
    expect(feedLists.map((c) => c.query.invoiceNumbers)).toEqual([['L1', 'L2', 'L3']]);
    expect(feedLists[0]!.query).toMatchObject({ isShowCombinedInvoices: true, isIncludeDeleted: true });
    expect(singles(api)).toEqual(['L3']);
    expect(chunks.flatMap((c) => c.records.map((r) => `${r._id}:${r.status}`)).sort()).toEqual(['i1:FULL_PAID', 'i2:BILLING', 'i3:PARTIAL_PAID']);

    // The same loads read again (lookback overlap) cost no second look-up.
    await run(api, fed(SERVER_NOW - HOUR), {}, 10, { loadsChangeFeed: true });
    expect(lists(api).filter((c) => c.query.invoiceNumbers !== undefined)).toHaveLength(1);
    expect(singles(api)).toEqual(['L3']);
  });

  it('tombstones a known invoice whose load no longer has it (voided and not listed)', async () => {
    await side.recordInvoices([{ invoiceId: 'i5', kind: 'primary', status: 'BILLING', billingDate: at(T0), deleted: false, loadReferenceNumbers: ['L5'] }]);
    const api = withLoads(new InvoiceServer([]).install(new FakeApi('main', SERVER_NOW)), [{ reference_number: 'L5', status: 'COMPLETED', updatedAt: at(SERVER_NOW - 10 * 60_000) }]);
    const chunks = await run(api, fed(SERVER_NOW - HOUR), {}, 10, { loadsChangeFeed: true });
    expect(singles(api)).toEqual(['L5']);
    expect(chunks.flatMap((c) => c.records)).toEqual([{ __freightSyncRemoved: true, key: 'i5' }]);
    expect((await side.invoicesOfLoads(['L5'])).get('L5')).toEqual([{ invoiceId: 'i5', kind: 'primary', deleted: true }]);
  });
});

describe('readInvoices: the sweep', () => {
  it('re-reads recently billed invoices within its request budget per pass, then rests until the period is over', async () => {
    const server = new InvoiceServer(Array.from({ length: 25 }, (_, i) => inv(`s${i}`, `S${i}`, 'FULL_PAID', SERVER_NOW - HOUR - i * 60_000)));
    const api = server.install(new FakeApi('main', SERVER_NOW));
    const sweepCalls = () => lists(api).filter((c) => c.query.billingTo !== undefined && c.query.invoiceNumbers === undefined && Date.parse(String(c.query.billingFrom)) === SERVER_NOW - 2 * 24 * HOUR);
    const options = { sweepDays: 2, sweepMaxRequestsPerPass: 2 };
    let chunks = await run(api, caughtUp, {}, 10, options);
    expect(sweepCalls()).toHaveLength(2);
    chunks = await run(api, chunks[chunks.length - 1]!.cursor, {}, 10, options);
    expect(sweepCalls()).toHaveLength(3); // the third page is short: the cycle is done
    await run(api, chunks[chunks.length - 1]!.cursor, {}, 10, options);
    expect(sweepCalls()).toHaveLength(3);
  });
});

describe('invoice keys', () => {
  const primary = { _id: 'X1', invoice: [{ load_reference_number: 'L1', reference_number: 'L1', chargeSetNumber: 'L1' }] };
  it('keeps the primary key, and never lets a sub-customer or combined invoice with the same _id collide with it', () => {
    const sub = markSubCustomer({ _id: 'X1', invoice: [{ load_reference_number: 'L1', reference_number: 'L1_SUB1', chargeSetNumber: 'CS-9' }] });
    const combined = { _id: 'X1', invoice: [...primary.invoice, { load_reference_number: 'L2', reference_number: 'L2' }] };
    expect([invoiceKey(primary), invoiceKey(sub), invoiceKey(combined)]).toEqual(['X1', 'sub:X1:CS-9', 'combined:X1']);
  });
});
