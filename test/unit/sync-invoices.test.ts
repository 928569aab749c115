import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateTables } from '../../src/state/tables.js';
import { SyncSideStore } from '../../src/state/stores/sync-side-store.js';
import { readInvoices, type InvoiceCursor } from '../../src/sync/strategies/invoices.js';
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

function run(api: FakeApi, cursor?: InvoiceCursor, p: Partial<RunPlan> = {}, pageSize = 10) {
  const e = env(api, { includePaymentHistory: true }, pageSize, db, () => new Date(nowMs));
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
    // i1 is open, i2 is final: only i1 is re-polled later.
    expect((await side.openInvoices(10)).map((o) => o.invoiceId)).toEqual(['i1']);
  });

  it('re-polls, in the same run, an open invoice the billing windows just recorded', async () => {
    // The re-poll reads what the window chunks' afterCommit wrote (the stream depends on commits).
    const server = new InvoiceServer([inv('i1', 'L1', 'BILLING', T0 + HOUR)]);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    const chunks = await run(api);
    const repoll = lists(api).filter((c) => c.query.status !== undefined);
    expect(repoll).toHaveLength(1);
    expect(repoll[0]!.query).toMatchObject({ billingFrom: at(T0 + HOUR), billingTo: at(T0 + HOUR), status: OPEN });
    expect(chunks.some((c) => c.batchId.startsWith('repoll_'))).toBe(true);
  });

  it('does not send includePaymentHistory to brokerage', async () => {
    const server = new InvoiceServer([]);
    const api = server.install(new FakeApi('brokerage', SERVER_NOW));
    await run(api, undefined, { initialFrom: at(SERVER_NOW - HOUR) });
    expect(lists(api)[0]!.query).not.toHaveProperty('includePaymentHistory');
  });

  it('in backfill mode reads billing windows only: no re-poll, no gap-fill', async () => {
    await side.recordInvoices([{ invoiceId: 'old', status: 'BILLING', billingDate: at(T0), loadReferenceNumbers: ['L0'] }]);
    await side.addInvoiceCandidates(['L9'], 'test');
    const server = new InvoiceServer([inv('i1', 'L1', 'BILLING', T0 + HOUR)]);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    await run(api, undefined, { mode: 'backfill', from: at(T0), to: at(T0 + 24 * HOUR) });
    expect(lists(api).every((c) => c.query.status === undefined)).toBe(true);
    expect(singles(api)).toEqual([]);
  });
});

describe('readInvoices: re-poll of invoices not yet final', () => {
  it('lists the open billing range with the open statuses, and fetches open invoices the list no longer shows', async () => {
    await side.recordInvoices([
      { invoiceId: 'i1', status: 'BILLING', billingDate: at(T0 + HOUR), loadReferenceNumbers: ['L1'] },
      { invoiceId: 'i2', status: 'PARTIAL_PAID', billingDate: at(T0 + 2 * HOUR), loadReferenceNumbers: ['L2'] },
      { invoiceId: 'i3', status: 'BILLING', billingDate: at(T0 + 3 * HOUR), loadReferenceNumbers: ['L3'] },
      { invoiceId: 'i4', status: 'FULL_PAID', billingDate: at(T0 + 4 * HOUR), loadReferenceNumbers: ['L4'] },
    ]);
    const server = new InvoiceServer([
      inv('i1', 'L1', 'PARTIAL_PAID', T0 + HOUR), // still open: shown by the list
      inv('i2', 'L2', 'FULL_PAID', T0 + 2 * HOUR), // paid since: the open-status list drops it
      inv('i3', 'L3', 'BILLING', T0 + 3 * HOUR), // open, but omitted by the list (several charge sets)
      inv('i4', 'L4', 'FULL_PAID', T0 + 4 * HOUR), // final: never re-polled
    ]);
    server.hiddenFromList.add('i3');
    const api = server.install(new FakeApi('main', SERVER_NOW));
    await run(api, caughtUp);

    const repoll = lists(api);
    expect(repoll).toHaveLength(1);
    expect(repoll[0]!.query).toMatchObject({ billingFrom: at(T0 + HOUR), billingTo: at(T0 + 3 * HOUR), status: OPEN, includePaymentHistory: true });
    // i1 came back in the list; i2 and i3 did not and are fetched one by one; i4 is final.
    expect(singles(api)).toEqual(['L2', 'L3']);
    // i2's payment is captured (final now); i1 and i3 stay open for the next run.
    expect((await side.openInvoices(10)).map((o) => [o.invoiceId, o.status])).toEqual([
      ['i1', 'PARTIAL_PAID'],
      ['i3', 'BILLING'],
    ]);
  });

  it('keeps an open invoice open when its single GET answers 404', async () => {
    await side.recordInvoices([{ invoiceId: 'i1', status: 'BILLING', billingDate: at(T0), loadReferenceNumbers: ['L1'] }]);
    const server = new InvoiceServer([]);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    const chunks = await run(api, caughtUp);
    expect(singles(api)).toEqual(['L1']);
    expect(chunks.flatMap((c) => c.records)).toEqual([]);
    expect(await side.countOpenInvoices()).toBe(1);
  });

  it('fails the run on other errors of the single GET (not mistaken for a missing invoice)', async () => {
    await side.recordInvoices([{ invoiceId: 'i1', status: 'BILLING', billingDate: at(T0), loadReferenceNumbers: ['L1'] }]);
    const server = new InvoiceServer([]);
    server.failSingle.set('L1', 500);
    const api = server.install(new FakeApi('main', SERVER_NOW));
    await expect(run(api, caughtUp)).rejects.toMatchObject({ status: 500 });
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

  it('does not look up candidates whose invoice is already known', async () => {
    await side.recordInvoices([{ invoiceId: 'i1', status: 'FULL_PAID', billingDate: at(T0), loadReferenceNumbers: ['L1'] }]);
    expect(await side.addInvoiceCandidates(['L1'], 'test')).toBe(0);
    const api = new InvoiceServer([]).install(new FakeApi('main', SERVER_NOW));
    await run(api, caughtUp);
    expect(singles(api)).toEqual([]);
  });
});
