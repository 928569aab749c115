import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, startApi, type Api } from './simulator-helpers.js';

/**
 * The brokerage date filters (spec §4.4.3 "Dates", §4.7, §4.8) as the simulator implements them:
 * by UTC day, a time part dropped — `updatedFrom=D` means updatedAt ≥ D 00:00Z, `updatedTo=D`
 * means updatedAt < (D+1) 00:00Z — and the main-only datetime filters ignored. Main unchanged.
 */
const DAY = 86_400_000;

type Params = Record<string, string | number | boolean | string[]>;

async function allPages(api: Api, path: string, params: Params, limit: number): Promise<any[]> {
  const out: any[] = [];
  for (let skip = 0; ; skip += limit) {
    const page = await api.get(`${path}${q({ ...params, skip, limit })}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    out.push(...page.body.data);
    if (page.body.data.length < limit) return out;
  }
}

async function truthOf(api: Api, resource: 'loads' | 'customers' | 'consignees'): Promise<any[]> {
  const out: any[] = [];
  for await (const record of api.sim.truth(resource)) if (record.isDeleted !== true) out.push(record);
  return out;
}

const ids = (records: any[]) => records.map((r) => String(r._id)).sort();
const onDays = (records: any[], field: string, from: string, to: string) =>
  records.filter((r) => String(r[field]).slice(0, 10) >= from && String(r[field]).slice(0, 10) <= to);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('brokerage: day-granular date filters', () => {
  let api: Api;
  let day: string;
  beforeAll(async () => {
    api = await startApi({ variant: 'brokerage', loads: 3000, customers: 300, consignees: 300, seed: 21, dataStart: new Date(Date.now() - 20 * DAY).toISOString() });
    day = dayOf(api.sim.now().getTime() - 10 * DAY);
  });
  afterAll(async () => api.sim.close());

  it('loads: updatedFrom/updatedTo match whole UTC days; a time part is dropped', async () => {
    const truth = await truthOf(api, 'loads');
    const expected = ids(onDays(truth, 'updatedAt', day, day));
    expect(expected.length).toBeGreaterThan(100); // more than a page: the case that matters
    expect(ids(await allPages(api, '/loads', { updatedFrom: day, updatedTo: day, sortBy: 'asc' }, 50))).toEqual(expected);
    // From late in the day to early in the same day: still the whole day.
    const timed = { updatedFrom: `${day}T23:59:59.999Z`, updatedTo: `${day}T00:00:00.001Z`, sortBy: 'asc' };
    expect(ids(await allPages(api, '/loads', timed, 50))).toEqual(expected);
    // Several days, both ends inclusive.
    const later = dayOf(Date.parse(day) + 2 * DAY);
    expect(ids(await allPages(api, '/loads', { updatedFrom: `${day}T12:00:00Z`, updatedTo: later }, 100))).toEqual(ids(onDays(truth, 'updatedAt', day, later)));
  });

  it('loads: createdFromDate/createdToDate match whole days; the main-only datetimes are ignored', async () => {
    const truth = await truthOf(api, 'loads');
    const created = await allPages(api, '/loads', { createdFromDate: `${day}T08:00:00Z`, createdToDate: `${day}T09:00:00Z` }, 100);
    expect(ids(created)).toEqual(ids(onDays(truth, 'createdAt', day, day)));
    const unfiltered = await api.get(`/loads${q({ limit: 100, sortBy: 'asc' })}`);
    const ignored = await api.get(`/loads${q({ limit: 100, sortBy: 'asc', updatedAtFrom: '2999-01-01T00:00:00Z', createdAtTo: '1999-01-01T00:00:00Z' })}`);
    expect(ids(ignored.body.data)).toEqual(ids(unfiltered.body.data));
  });

  it('loads: sortBy asc|desc orders by createdAt (the spec names no field)', async () => {
    const asc = (await api.get(`/loads${q({ updatedFrom: day, updatedTo: day, limit: 100, sortBy: 'asc' })}`)).body.data as any[];
    const desc = (await api.get(`/loads${q({ updatedFrom: day, updatedTo: day, limit: 100, sortBy: 'desc' })}`)).body.data as any[];
    const created = (records: any[]) => records.map((r) => String(r.createdAt));
    expect(created(asc)).toEqual([...created(asc)].sort());
    expect(created(desc)).toEqual([...created(desc)].sort().reverse());
    expect((await api.get('/loads?sortBy=updatedAt')).status).toBe(400);
  });

  it('customers and consignees: days as well; consignees ignore sortBy (main only, §4.8)', async () => {
    for (const [path, resource] of [['/customer/', 'customers'], ['/consignee/', 'consignees']] as const) {
      const truth = await truthOf(api, resource);
      const from = dayOf(Date.parse(day) - 3 * DAY);
      const got = await allPages(api, path, { updatedFrom: `${from}T20:00:00Z`, updatedTo: `${day}T01:00:00Z`, isIncludeDeleted: true }, 100);
      expect(ids(got), path).toEqual(ids(onDays(truth, 'updatedAt', from, day)));
      expect(got.length, path).toBeGreaterThan(0);
      const ignored = await api.get(`${path}${q({ limit: 5, updatedAtFrom: '2999-01-01T00:00:00Z' })}`);
      expect(ignored.body.count, path).toBe(truth.length);
    }
    const ascending = (await api.get(`/customer/${q({ limit: 20, sortBy: JSON.stringify({ createdAt: 1 }) })}`)).body.data as any[];
    expect(ascending.map((r) => r.createdAt)).toEqual(ascending.map((r) => r.createdAt).sort());
    const consignees = (await api.get(`/consignee/${q({ limit: 20, sortBy: JSON.stringify({ createdAt: 1 }) })}`)).body.data as any[];
    const plain = (await api.get(`/consignee/${q({ limit: 20 })}`)).body.data as any[];
    expect(ids(consignees)).toEqual(ids(plain));
    expect(consignees.map((r) => r.createdAt)).toEqual(consignees.map((r) => r.createdAt).sort().reverse());
  });
});

describe('main: date filters keep their time (unchanged)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi({ variant: 'main', loads: 1500, seed: 21, dataStart: new Date(Date.now() - 20 * DAY).toISOString() });
  });
  afterAll(async () => api.sim.close());

  it('updatedFrom/updatedTo with a time select that instant; updatedAtFrom/To work', async () => {
    const first = (await api.get('/loads?limit=1&sortBy={"updatedAt":1}')).body.data[0];
    const exact = String(first.updatedAt);
    const byInstant = (await api.get(`/loads${q({ updatedFrom: exact, updatedTo: exact, limit: 50 })}`)).body.data as any[];
    expect(byInstant.length).toBeGreaterThanOrEqual(1);
    expect(byInstant.every((l) => l.updatedAt === exact)).toBe(true);
    const byDatetime = (await api.get(`/loads${q({ updatedAtFrom: exact, updatedAtTo: exact, limit: 50 })}`)).body.data as any[];
    expect(ids(byDatetime)).toEqual(ids(byInstant));
  });
});
