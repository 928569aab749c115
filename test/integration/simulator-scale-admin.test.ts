import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, startApi, type Api } from './simulator-helpers.js';

describe('1M loads', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ loads: 1_000_000, seed: 21, mutator: { enabled: false, intervalMs: 1000, perTick: 5 } });
  });
  afterAll(async () => api.sim.close());

  it('serves deep pages correctly, with overlay changes merged in', async () => {
    await api.sim.mutate(2000);
    const sort = JSON.stringify({ updatedAt: 1 });
    const deep = await api.get(`/loads${q({ limit: 50, skip: 900_000, sortBy: sort })}`);
    expect(deep.status).toBe(200);
    expect(deep.body.data).toHaveLength(50);
    const rows = deep.body.data as any[];
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i - 1].updatedAt < rows[i].updatedAt || (rows[i - 1].updatedAt === rows[i].updatedAt && rows[i - 1]._id < rows[i]._id)).toBe(true);
    }
    // Keyset continuation from the last row returns the next rows of the same order.
    const last = rows[49];
    const next = await api.get(`/loads${q({ limit: 50, skip: 900_050, sortBy: sort })}`);
    const keyset = await api.get(`/loads${q({ limit: 50, updatedAtFrom: last.updatedAt, sortBy: sort })}`);
    const afterLast = (keyset.body.data as any[]).filter((r) => r.updatedAt > last.updatedAt || (r.updatedAt === last.updatedAt && r._id > last._id));
    expect(afterLast.slice(0, 10).map((r) => r._id)).toEqual((next.body.data as any[]).slice(0, 10).map((r) => r._id));
    // The most recently updated records are the mutated ones.
    const newest = await api.get(`/loads${q({ limit: 5, sortBy: JSON.stringify({ updatedAt: -1 }), isIncludeDeleted: true })}`);
    expect(Date.parse(newest.body.data[0].updatedAt)).toBeGreaterThan(Date.now() - 120_000);
    const oneMillionth = await api.get('/loads/M01000000');
    expect(oneMillionth.status).toBe(200);
    expect(oneMillionth.body.data.containerNo).toMatch(/^[A-Z]{4}\d{7}$/);
    const byContainer = await api.get(`/loads${q({ containerNo: oneMillionth.body.data.containerNo })}`);
    expect(byContainer.body.data.map((l: any) => l.reference_number)).toContain('M01000000');
    expect(process.memoryUsage().rss).toBeLessThan(600 * 1024 * 1024);
  });

  it('admin endpoints: stats, config, mutate, reset-stats', async () => {
    await api.get('/loads?limit=1');
    const stats = (await (await fetch(`${api.sim.adminUrl}/stats`)).json()) as any;
    expect(stats.requests).toBeGreaterThan(0);
    expect(stats.byRoute['GET /loads']['200']).toBeGreaterThan(0);
    expect((await fetch(`${api.sim.adminUrl}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pageDelayMs: 5 }) })).status).toBe(200);
    expect(api.sim.options.pageDelayMs).toBe(5);
    expect((await fetch(`${api.sim.adminUrl}/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pageDelayMs: -1 }) })).status).toBe(400);
    api.sim.configure({ pageDelayMs: 0 });
    const before = api.sim.stats().requests;
    expect((await fetch(`${api.sim.adminUrl}/mutate?count=3`, { method: 'POST' })).status).toBe(200);
    expect(api.sim.stats().requests).toBe(before); // admin calls are not API requests
    await fetch(`${api.sim.adminUrl}/reset-stats`, { method: 'POST' });
    expect(api.sim.stats().requests).toBe(0);
  });
});

describe('truth streaming', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ loads: 5000, seed: 4 });
  });
  afterAll(async () => api.sim.close());

  it('streams every load including deleted ones, as NDJSON over admin too', async () => {
    const page = await api.get('/loads?limit=1');
    await api.send('DELETE', `/loads/${page.body.data[0]._id}`);
    let n = 0;
    let deleted = 0;
    for await (const load of api.sim.truth('loads')) {
      n++;
      if (load['isDeleted'] === true) deleted++;
    }
    expect(n).toBe(5000);
    expect(deleted).toBe(1);
    const res = await fetch(`${api.sim.adminUrl}/truth?resource=loads`);
    expect(res.headers.get('content-type')).toMatch(/ndjson/);
    const lines = (await res.text()).trim().split('\n');
    expect(lines).toHaveLength(5000);
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.isDeleted)).toHaveLength(1);
    expect((await fetch(`${api.sim.adminUrl}/truth?resource=nope`)).status).toBe(400);
  });
});
