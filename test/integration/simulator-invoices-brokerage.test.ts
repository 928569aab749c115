import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, startApi, type Api } from './simulator-helpers.js';

describe('invoices (main)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ variant: 'main', loads: 2000, seed: 3, dataStart: new Date(Date.now() - 400 * 86_400_000).toISOString() });
  });
  afterAll(async () => api.sim.close());

  const allPages = async (params: Record<string, string | number | boolean | string[]>) => {
    const out: any[] = [];
    let count = -1;
    for (let skip = 0; ; skip += 50) {
      const page = await api.get(`/invoices${q({ ...params, skip, limit: 50 })}`);
      expect(page.status).toBe(200);
      count = page.body.count;
      out.push(...page.body.data);
      if (page.body.data.length < 50) break;
    }
    return { items: out, count };
  };

  it('the list silently omits multi-charge-set invoices that GET /invoices/<ref> returns', async () => {
    const truth: any[] = [];
    for await (const inv of api.sim.truth('invoices')) truth.push(inv);
    const multi = truth.filter((i) => i.total > 1);
    expect(multi.length).toBeGreaterThan(0);
    const listed = await allPages({ billingFrom: '2000-01-01', billingTo: '2100-01-01' });
    expect(listed.count).toBe(truth.length - multi.length);
    expect(listed.items).toHaveLength(listed.count);
    const listedIds = new Set(listed.items.map((i) => i._id));
    expect(multi.some((m) => listedIds.has(m._id))).toBe(false);
    const ref = multi[0].invoice[0].load_reference_number;
    const one = await api.get(`/invoices/${encodeURIComponent(ref)}`);
    expect(one.status).toBe(200);
    expect(one.body.count).toBe(1);
    expect(one.body.data._id).toBe(multi[0]._id);
    expect(one.body.data).not.toHaveProperty('paymentHistory');
    const withHistory = await api.get(`/invoices/${encodeURIComponent(ref)}?includePaymentHistory=true`);
    expect(withHistory.body.data.paymentHistory).toBeInstanceOf(Array);
  });

  it('an unbounded query only covers the last 90 days', async () => {
    const unbounded = await api.get('/invoices?limit=1');
    const bounded = await api.get('/invoices?limit=1&billingFrom=2000-01-01&billingTo=2100-01-01');
    expect(unbounded.body.count).toBeLessThan(bounded.body.count);
    const oldest = await api.get(`/invoices${q({ limit: 1, sortBy: JSON.stringify({ billingDate: 1 }) })}`);
    expect(Date.parse(oldest.body.data[0].billingDate)).toBeGreaterThanOrEqual(api.sim.now().getTime() - 90 * 86_400_000 - 1000);
  });

  it('billing dates stay put while payments change status and history', async () => {
    await api.sim.mutate(400);
    const truth: any[] = [];
    for await (const inv of api.sim.truth('invoices')) truth.push(inv);
    const paidLater = truth.filter((i) => i.updatedAt > i.billingDate && i.paymentHistory.length > 0);
    expect(paidLater.length).toBeGreaterThan(0);
    const created = truth.filter((i) => i.createdAt === i.billingDate && i.createdAt > new Date(Date.now() - 60_000).toISOString());
    expect(created.length).toBeGreaterThan(0); // loads that reached BILLING got invoices
    for (const inv of paidLater) expect(['PARTIAL_PAID', 'FULL_PAID']).toContain(inv.status);
    const statusFiltered = await api.get(`/invoices${q({ status: ['FULL_PAID'], billingFrom: '2000-01-01', limit: 50 })}`);
    expect((statusFiltered.body.data as any[]).every((i) => i.status === 'FULL_PAID')).toBe(true);
    expect((await api.get('/invoices?limit=51')).status).toBe(400);
  });
});

describe('brokerage variant', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ variant: 'brokerage', loads: 1500, seed: 9 });
  });
  afterAll(async () => api.sim.close());

  it('has its own fields, limits and sortBy form', async () => {
    const page = await api.get('/loads?limit=100&sortBy=asc');
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(100);
    const load = page.body.data[0];
    expect(load.reference_number.startsWith('BRK')).toBe(true);
    for (const f of ['routingOrder', 'carrierName', 'terminal', 'milestoneStatus']) expect(load).toHaveProperty(f);
    for (const f of ['driverOrder', 'chargeSets', 'vendorPay', 'driverName']) expect(load).not.toHaveProperty(f);
    const created = (page.body.data as any[]).map((l) => l.createdAt);
    expect([...created].sort()).toEqual(created);
    expect((await api.get('/loads?limit=101')).status).toBe(400);
    expect((await api.get(`/loads?sortBy=${encodeURIComponent('{"updatedAt":1}')}`)).status).toBe(400);
    expect((await api.get('/customer/?limit=100')).status).toBe(200);
    expect((await api.get('/customer/?limit=101')).status).toBe(400);
    expect((await api.get('/bills')).status).toBe(404);
    expect((await api.get('/audit/load?createdAtFrom=2000-01-01T00:00:00Z&createdAtTo=2100-01-01T00:00:00Z')).status).toBe(404);
  });

  it('updatedFrom/updatedTo select whole UTC days (the day semantics: simulator-day-filters.test.ts)', async () => {
    const first = await api.get('/loads?limit=1&sortBy=asc');
    const day = String(first.body.data[0].updatedAt).slice(0, 10);
    const byDay = await api.get(`/loads${q({ updatedFrom: day, updatedTo: day, limit: 100 })}`);
    expect(byDay.body.data.length).toBeGreaterThan(0);
    expect((byDay.body.data as any[]).every((l) => String(l.updatedAt).startsWith(day))).toBe(true);
  });

  it('requires consignee on create and changes status through PUT /load-status/', async () => {
    const customers = await api.get('/customer/?limit=1');
    const consignees = await api.get('/consignee/?limit=1');
    const caller = customers.body.data[0]._id;
    const body = { type_of_load: 'IMPORT', preSetOrderStatus: '', caller, shipper: [caller] };
    const missing = await api.send('POST', '/loads', body);
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/consignee/);
    const ok = await api.send('POST', '/loads', { ...body, consignee: [consignees.body.data[0]._id] });
    expect(ok.status).toBe(200);
    const ref = ok.body.data.reference_number;
    const st = await api.send('PUT', '/load-status/', { reference_number: ref, status: 'AVAILABLE' });
    expect(st.status).toBe(200);
    expect(st.body.data.status).toBe('AVAILABLE');
    const events = await api.get('/webhook/?type=load');
    const statusEvent = (events.body.data as any[]).find((e) => e.eventType === 'load#status_updated' && e.data.data?.reference_number === ref);
    expect(statusEvent.data.data.changedValues).toMatchObject({ status: 'Available' });
  });
});
