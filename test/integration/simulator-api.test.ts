import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, startApi, type Api } from './simulator-helpers.js';

describe('simulator API: envelopes, limits, ordering, deletes (main)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ variant: 'main', loads: 3000, seed: 11 });
  });
  afterAll(async () => api.sim.close());

  it('wraps successes and errors in the §2.1/§2.2 envelopes, count only where documented', async () => {
    const loads = await api.get('/loads?limit=2');
    expect(loads.status).toBe(200);
    expect(loads.body).toMatchObject({ _object: '/api/response', self: '/v1/loads', version: '1.0.0', error: null });
    expect(loads.body).not.toHaveProperty('count');
    expect(loads.body.data).toHaveLength(2);

    const customers = await api.get('/customer/?limit=5');
    expect(customers.body.count).toBe(200);
    const bills = await api.get('/bills?limit=5');
    expect(bills.body.count).toBe(1000);
    const moves = await api.get('/support-move?limit=5');
    expect(moves.body.count).toBe(500);
    expect(moves.body.version).toBe(1); // some routes answer with the number 1
    expect(moves.body.data[0]).not.toHaveProperty('driverPay');
    const withPay = await api.get('/support-move?limit=1&includeDriverPay=true');
    expect(withPay.body.data[0].driverPay).toBeInstanceOf(Array);

    const bad = await api.get('/loads?limit=51');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ _object: '/api/error', self: '/v1/loads', status: 400 });
    expect(bad.body.message).toMatch(/limit/);
    expect((await api.get('/bills?limit=0')).status).toBe(400);
    expect((await api.get('/support-move?limit=51')).status).toBe(400);
    expect((await api.get('/loads?limit=50')).status).toBe(200);

    expect((await api.get('/nope')).status).toBe(404);
    expect((await api.send('PATCH', '/loads')).status).toBe(405);
    const unauth = await fetch(`${api.sim.baseUrl}/loads`);
    expect(unauth.status).toBe(401);
    expect(((await unauth.json()) as any)._object).toBe('/api/error');
  });

  it('orders by updatedAt with _id tie-break, and generates timestamp ties', async () => {
    const page = await api.get(`/loads${q({ limit: 50, skip: 100, sortBy: JSON.stringify({ updatedAt: 1 }) })}`);
    const rows = page.body.data as any[];
    for (let i = 1; i < rows.length; i++) {
      const a = rows[i - 1];
      const b = rows[i];
      expect(a.updatedAt < b.updatedAt || (a.updatedAt === b.updatedAt && a._id < b._id)).toBe(true);
    }
    const distinct = new Set(rows.map((r) => r.updatedAt));
    expect(distinct.size).toBeLessThan(rows.length / 2);
    // Bracket form, descending.
    const desc = await api.get('/loads?limit=5&sortBy[createdAt]=-1');
    const created = (desc.body.data as any[]).map((r) => r.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('inclusive updatedAt windows return each tied record exactly once across keyset pages', async () => {
    const all = await api.get(`/loads${q({ limit: 50, sortBy: JSON.stringify({ updatedAt: 1 }) })}`);
    const from = all.body.data[10].updatedAt;
    const to = all.body.data[40].updatedAt;
    const win = await api.get(`/loads${q({ limit: 50, updatedAtFrom: from, updatedAtTo: to, sortBy: JSON.stringify({ updatedAt: 1 }) })}`);
    const expected = (all.body.data as any[]).filter((r) => r.updatedAt >= from && r.updatedAt <= to).map((r) => r._id);
    expect((win.body.data as any[]).map((r) => r._id)).toEqual(expected);
  });

  it('bills have no sortBy: updates during offset paging make a sloppy reader miss records', async () => {
    const seen = new Set<string>();
    const first = await api.get('/bills?limit=50');
    for (const b of first.body.data as any[]) seen.add(b._id);
    await api.sim.mutate(150); // moves some bills from later pages to the front
    for (let skip = 50; skip < 1000; skip += 50) {
      const page = await api.get(`/bills?limit=50&skip=${skip}`);
      const dates = (page.body.data as any[]).map((b) => b.updatedAt);
      expect([...dates].sort().reverse()).toEqual(dates);
      for (const b of page.body.data as any[]) seen.add(b._id);
    }
    const truth: string[] = [];
    for await (const bill of api.sim.truth('bills')) truth.push(String(bill['_id']));
    expect(truth).toHaveLength(1000);
    expect(seen.size).toBeLessThan(1000);
  });

  it('deletes: hidden by default, isIncludeDeleted shows a tombstone, isDeleted lists only deleted, GET is 410', async () => {
    const page = await api.get('/loads?limit=1&skip=7');
    const load = page.body.data[0];
    const del = await api.send('DELETE', `/loads/${load._id}`);
    expect(del.status).toBe(200);
    expect(del.body.data.isDeleted).toBe(true);
    const gone = await api.get(`/loads/${encodeURIComponent(load.reference_number)}`);
    expect(gone.status).toBe(410);
    expect(gone.body._object).toBe('/api/error');
    const hidden = await api.get(`/loads${q({ reference_numbers: [load.reference_number] })}`);
    expect(hidden.body.data).toHaveLength(0);
    const shown = await api.get(`/loads${q({ reference_numbers: [load.reference_number], isIncludeDeleted: true })}`);
    expect(shown.body.data).toHaveLength(1);
    expect(shown.body.data[0].isDeleted).toBe(true);
    expect(shown.body.data[0].updatedAt > load.updatedAt).toBe(true);
    const onlyDeleted = await api.get('/loads?isDeleted=true&limit=50');
    expect((onlyDeleted.body.data as any[]).every((l) => l.isDeleted === true)).toBe(true);
    expect((onlyDeleted.body.data as any[]).map((l) => l._id)).toContain(load._id);
    expect((await api.send('DELETE', `/loads/${load._id}`)).status).toBe(410);
  });

  it('finds loads by key fields, including references with a slash (encoded)', async () => {
    const ref = 'M00000997/1';
    const one = await api.get(`/loads/${encodeURIComponent(ref)}`);
    expect(one.status).toBe(200);
    expect(one.body.data.reference_number).toBe(ref);
    expect((await api.get(`/loads/${ref}`)).status).toBe(404); // unencoded slash: a different path
    const byContainer = await api.get(`/loads${q({ containerNo: one.body.data.containerNo })}`);
    expect(byContainer.body.data.map((l: any) => l.reference_number)).toEqual([ref]);
    const bySearch = await api.get(`/loads${q({ searchTerm: one.body.data.secondaryReferenceNo })}`);
    expect(bySearch.body.data.map((l: any) => l.reference_number)).toEqual([ref]);
    const byStatus = await api.get(`/loads${q({ status: ['BILLING', 'FULL_PAID'], limit: 50 })}`);
    expect(byStatus.body.data.length).toBeGreaterThan(0);
    expect((byStatus.body.data as any[]).every((l) => ['BILLING', 'FULL_PAID'].includes(l.status))).toBe(true);
    const withSets = await api.get(`/loads/${encodeURIComponent(ref)}?includeChargeSets=true&includeVendorPay=true`);
    expect(withSets.body.data.chargeSets[0]).toHaveProperty('chargeSetNumber');
    expect(withSets.body.data.vendorPay[0]).toHaveProperty('bill');
    expect(one.body.data).not.toHaveProperty('chargeSets');
  });

  it('creates loads with validation that names the field', async () => {
    const customers = await api.get('/customer/?limit=1');
    const caller = customers.body.data[0]._id;
    const missing = await api.send('POST', '/loads', { preSetOrderStatus: '', caller, shipper: [caller] });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/type_of_load/);
    const badStatus = await api.send('POST', '/loads', { type_of_load: 'IMPORT', preSetOrderStatus: '', caller, shipper: [caller], status: 'AVAILABLE' });
    expect(badStatus.body.message).toMatch(/status/);
    const badCaller = await api.send('POST', '/loads', { type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'nope', shipper: [caller] });
    expect(badCaller.body.message).toMatch(/caller/);
    const unknown = await api.send('POST', '/loads', { type_of_load: 'IMPORT', preSetOrderStatus: '', caller, shipper: [caller], routingOrderX: 1 });
    expect(unknown.body.message).toMatch(/routingOrderX/);
    const ok = await api.send('POST', '/loads', { type_of_load: 'IMPORT', preSetOrderStatus: '', caller, shipper: [caller], secondaryReferenceNo: 'ERP-42', containerNo: 'ABCU1234567' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ status: 'PENDING', secondaryReferenceNo: 'ERP-42', isDeleted: false });
    expect(ok.body.data.caller._id).toBe(caller);
    const found = await api.get(`/loads${q({ searchTerm: 'ERP-42' })}`);
    expect(found.body.data.map((l: any) => l.reference_number)).toEqual([ok.body.data.reference_number]);

    const upd = await api.send('PUT', `/loads?reference_number=${encodeURIComponent(ok.body.data.reference_number)}`, { sealNo: 'S1', officeNote: 'hello' });
    expect(upd.body.data.sealNo).toBe('S1');
    const st = await api.send('PUT', `/load-status/${encodeURIComponent(ok.body.data.reference_number)}`, { status: 'AVAILABLE' });
    expect(st.body.data.status).toBe('AVAILABLE');
    const badSt = await api.send('PUT', `/load-status/${encodeURIComponent(ok.body.data.reference_number)}`, { status: 'DISPATCHED' });
    expect(badSt.status).toBe(400);
    expect(badSt.body.message).toMatch(/status/);

    const events = await api.get(`/webhook/${q({ type: ['load'], limit: 50, sortBy: JSON.stringify({ createdAt: -1 }) })}`);
    const types = (events.body.data as any[]).filter((e) => JSON.stringify(e.data).includes(ok.body.data._id)).map((e) => e.eventType);
    expect(types).toEqual(expect.arrayContaining(['load#created', 'load#reference_updated', 'load#status_updated']));
  });

  it('uploads documents as multipart with exact type names', async () => {
    const ref = 'M00000005';
    const form = new FormData();
    form.append('reference_number', ref);
    form.append('documentType', 'Proof of Delivery');
    form.append('file', new Blob(['%PDF-1.4']), 'pod.pdf');
    const up = await fetch(`${api.sim.baseUrl}/loads/document`, { method: 'POST', headers: { authorization: `Bearer ${api.token}` }, body: form });
    const body = (await up.json()) as any;
    expect(up.status).toBe(200);
    expect(body.data.documentType).toBe('Proof of Delivery');
    const list = await api.get(`/load-document/${q({ reference_number: ref, doc_type: 'Proof of Delivery' })}`);
    expect(list.body.data).toEqual([{ type: 'Proof of Delivery', url: body.data.url }]);
    const badForm = new FormData();
    badForm.append('reference_number', ref);
    badForm.append('documentType', 'POD');
    badForm.append('file', new Blob(['x']), 'x.pdf');
    const bad = await fetch(`${api.sim.baseUrl}/loads/document`, { method: 'POST', headers: { authorization: `Bearer ${api.token}` }, body: badForm });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).message).toMatch(/documentType/);
    const types = await api.get('/load-document-type');
    expect(types.body.data).toContain('TIR');
    expect(types.body.data).not.toContain('Per Diem');
  });

  it('audits need both bounds and page by pageToken', async () => {
    expect((await api.get('/audit/load?createdAtFrom=2000-01-01T00:00:00Z')).status).toBe(400);
    await api.sim.mutate(300);
    const from = '2000-01-01T00:00:00.000Z';
    const to = new Date(api.sim.now().getTime() + 1000).toISOString();
    const seen: string[] = [];
    let token = '';
    for (let i = 0; i < 100; i++) {
      const page = await api.get(`/audit/load${q({ createdAtFrom: from, createdAtTo: to, limit: 50, ...(token ? { pageToken: token } : {}) })}`);
      expect(page.status).toBe(200);
      seen.push(...(page.body.data as any[]).map((a) => a._id));
      token = page.body.other.pageToken;
      if (!token) break;
    }
    expect(seen.length).toBeGreaterThan(50);
    expect(new Set(seen).size).toBe(seen.length);
    expect((await api.get(`/audit/load${q({ createdAtFrom: from, createdAtTo: to, limit: 51 })}`)).status).toBe(400);
  });

  it('customer CRUD with nested create response', async () => {
    const missing = await api.send('POST', '/customer', { company_name: 'X' });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/companyID/);
    const created = await api.send('POST', '/customer', { companyID: 'ERP1', company_name: 'New Co', address: { address: '1 A St' }, address1: '1 A St', isAddressVerified: true, city: 'Newark', state: 'NJ', country: 'US', zip_code: '07114' });
    expect(created.body.data.statusCode).toBe(201);
    const id = created.body.data.data.user.customer._id;
    expect((await api.get(`/customer/${id}`)).body.data.company_name).toBe('New Co');
    const upd = await api.send('PUT', `/customer/${id}`, { company_name: 'Renamed Co' });
    expect(upd.body.data.data.company_name).toBe('Renamed Co');
    const del = await api.send('DELETE', `/customer/${id}`);
    expect(del.body.data.data.success).toBe(true);
    expect((await api.get(`/customer/${id}`)).status).toBe(410);
  });
});
