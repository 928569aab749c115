import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, startApi, type Api } from './simulator-helpers.js';

/**
 * The simulator's invoice lifecycle (option `invoiceLifecycle`, both variants): rebills of paid
 * invoices, sub-customer invoices listed only with `isSubCustomer`, combined invoices listed only
 * with `isShowCombinedInvoices`, voided invoices listed only with `isIncludeDeleted`; every change
 * moves the updatedAt of the loads it touches.
 */
describe.each(['main', 'brokerage'] as const)('simulator invoice lifecycle (%s)', (variant) => {
  let api: Api;
  let truth: any[];
  const before = new Map<string, any>();
  beforeAll(async () => {
    api = await startApi({ variant, loads: 3000, seed: 21, invoiceLifecycle: true });
    for await (const inv of api.sim.truth('invoices')) before.set(String(inv._id), inv);
    api.sim.advance(60_000);
    await api.sim.mutate(3000);
    truth = [];
    for await (const inv of api.sim.truth('invoices')) truth.push(inv);
  });
  afterAll(async () => api.sim.close());

  const listAll = async (params: Record<string, string | number | boolean | string[]>) => {
    const out: any[] = [];
    for (let skip = 0; ; skip += 50) {
      const page = await api.get(`/invoices${q({ billingFrom: '2000-01-01T00:00:00Z', billingTo: '2100-01-01T00:00:00Z', ...params, skip, limit: 50 })}`);
      expect(page.status).toBe(200);
      out.push(...page.body.data);
      if (page.body.data.length < 50) return out;
    }
  };
  const loadRefs = (inv: any): string[] => [...new Set<string>(inv.invoice.map((e: any) => e.load_reference_number))];

  it('rebills paid invoices: more charges, status back to PARTIAL_PAID or REBILLING, paid again later', () => {
    const rebilled = truth.filter((inv) => inv.invoice.some((e: any) => e.pricing.some((l: any) => l.name === 'Rebill charge')));
    expect(rebilled.length).toBeGreaterThan(0);
    for (const inv of rebilled) expect(inv.totalAmount).toBeGreaterThan(before.get(inv._id)?.totalAmount ?? 0);
    expect(rebilled.some((inv) => inv.status !== 'FULL_PAID')).toBe(true);
  });

  it('lists sub-customer invoices only with isSubCustomer, combined only with isShowCombinedInvoices, voided only with isIncludeDeleted', async () => {
    const plain = new Set((await listAll({})).map((i) => i._id));
    const sub = await listAll({ isSubCustomer: true });
    const combined = (await listAll({ isShowCombinedInvoices: true })).filter((i) => loadRefs(i).length > 1);
    const deleted = await listAll({ isDeleted: true });
    expect(sub.length).toBeGreaterThan(0);
    expect(combined.length).toBeGreaterThan(0);
    expect(deleted.length).toBeGreaterThan(0);
    for (const inv of [...sub, ...combined, ...deleted]) expect(plain.has(inv._id)).toBe(false);
    for (const inv of deleted) expect(inv.isDeleted).toBe(true);
    // A sub-customer invoice is another charge set of a load that has its own primary invoice.
    for (const inv of sub) expect(inv.invoice[0].reference_number).toMatch(/_SUB\d+$/);
    // The voided originals of a combined invoice come back with isIncludeDeleted, not without.
    const withDeleted = new Set((await listAll({ isIncludeDeleted: true, isShowCombinedInvoices: true })).map((i) => i._id));
    for (const inv of deleted) expect(withDeleted.has(inv._id)).toBe(true);
    // invoiceNumbers finds every kind of a load's invoices, by load reference number.
    const ref = loadRefs(combined[0])[0]!;
    const byNumber = await listAll({ invoiceNumbers: [ref], isShowCombinedInvoices: true, isIncludeDeleted: true });
    expect(byNumber.map((i) => i._id)).toContain(combined[0]._id);
    expect(byNumber.some((i) => i.isDeleted === true)).toBe(true);
  });

  it('GET /invoices/<ref> answers with the combined invoice of a combined load', async () => {
    const combined = truth.find((i) => i.isDeleted !== true && loadRefs(i).length > 1)!;
    const one = await api.get(`/invoices/${encodeURIComponent(loadRefs(combined)[1]!)}`);
    expect(one.status).toBe(200);
    expect(one.body.data._id).toBe(combined._id);
  });

  it('moves the updatedAt of every load an invoice change touches', async () => {
    const loads = new Map<string, any>();
    for await (const load of api.sim.truth('loads')) loads.set(String(load.reference_number), load);
    const changed = truth.filter((inv) => inv.updatedAt > (before.get(inv._id)?.updatedAt ?? ''));
    expect(changed.length).toBeGreaterThan(0);
    for (const inv of changed) {
      for (const ref of loadRefs(inv)) expect(loads.get(ref).updatedAt >= inv.updatedAt, `${inv._id} ${ref}`).toBe(true);
    }
  });
});
