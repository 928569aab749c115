import { describe, expect, it } from 'vitest';
import type { Page } from '../../src/api/paging.js';
import { asDayCursor, dayCursorSchema, readDayWindows, type DayCursor, type DaySource } from '../../src/sync/strategies/day-window.js';
import type { RawRecord, RunPlan } from '../../src/sync/stream-definition.js';
import { FreightSyncError } from '../../src/util/errors.js';
import { Prng } from '../../src/simulator/prng.js';
import { FakeApi } from '../helpers/fake-api.js';
import { at, collect, collectUntilError, env, HOUR, page, plan, T0 } from '../helpers/strategy-fakes.js';

/**
 * Day windows (design §2.8) against a scripted in-memory brokerage server: it answers the rows
 * whose updatedAt falls on the requested UTC days (both inclusive, time ignored — the filters are
 * dates), in createdAt order (ties by id) like brokerage `sortBy=asc`, without `count`, and
 * records every request. Tests change rows between requests.
 */
const DAY = 24 * HOUR;
/** Four days of data: T0 (2024-06-01) .. T0 + 3 days; the server stands at 10:00 on the last. */
const SERVER_NOW = T0 + 3 * DAY + 10 * HOUR;
const TODAY = '2024-06-04';

interface Row extends RawRecord {
  id: string;
  /** createdAt (the sort key) and updatedAt (the filtered one), ISO. */
  c: string;
  t: string;
  v: number;
}

interface FetchArgs {
  fromDay: string;
  toDay: string;
  skip: number;
}

class DayServer implements DaySource {
  readonly requests: FetchArgs[] = [];
  beforeRequest: (n: number, server: DayServer) => void = () => {};
  /** Answers every request from offset 0 (a server ignoring `skip`). */
  ignoreSkip = false;

  constructor(public rows: Row[]) {}

  key = (r: RawRecord) => String(r.id);

  async fetch(args: { fromDay: string; toDay: string; skip: number; limit: number; signal: AbortSignal }): Promise<Page<RawRecord>> {
    const n = this.requests.length;
    this.beforeRequest(n, this);
    this.requests.push({ fromDay: args.fromDay, toDay: args.toDay, skip: args.skip });
    const sorted = this.rows
      .filter((r) => r.t.slice(0, 10) >= args.fromDay && r.t.slice(0, 10) <= args.toDay)
      .sort((a, b) => a.c.localeCompare(b.c) || a.id.localeCompare(b.id));
    const skip = this.ignoreSkip ? 0 : args.skip;
    return page(sorted.slice(skip, skip + args.limit).map((r) => ({ ...r })));
  }

  /** A new version of a row stamped `ms` (it moves to that day; its createdAt, the sort key, stays). */
  update(id: string, ms: number): void {
    const i = this.rows.findIndex((x) => x.id === id);
    if (i < 0) throw new Error(`no row ${id}`);
    this.rows[i] = { ...this.rows[i]!, t: at(ms), v: this.rows[i]!.v + 1 };
  }

  /** Rows of a window in the order the server answers them. */
  order(fromDay: string, toDay = fromDay): string[] {
    return this.rows
      .filter((r) => r.t.slice(0, 10) >= fromDay && r.t.slice(0, 10) <= toDay)
      .sort((a, b) => a.c.localeCompare(b.c) || a.id.localeCompare(b.id))
      .map((r) => r.id);
  }
}

/** `n` rows created and last updated on the day starting at `dayStart`, spread over its first 20 hours. */
function rows(prefix: string, n: number, dayStart: number): Row[] {
  return Array.from({ length: n }, (_, i) => {
    const ms = dayStart + Math.floor((i * 20 * HOUR) / n);
    return { id: `${prefix}${String(i).padStart(3, '0')}`, c: at(ms), t: at(ms), v: 0 };
  });
}

function read(server: DayServer, pageSize: number, p: Partial<RunPlan> = {}, cursor?: DayCursor) {
  const fake = new FakeApi('brokerage', SERVER_NOW);
  return readDayWindows('loads', server, env(fake, {}, pageSize), cursor, plan({ maxWindowMs: DAY, ...p }), new AbortController().signal);
}

/** The last version of each key delivered. */
function delivered(chunks: Array<{ records: RawRecord[] }>): Map<string, number> {
  const out = new Map<string, number>();
  for (const chunk of chunks) for (const r of chunk.records) out.set(String(r.id), Number(r.v));
  return out;
}

describe('readDayWindows', () => {
  it('reads a day to its end with pages that overlap by one record, and asks by date', async () => {
    const server = new DayServer(rows('a', 10, T0 + 3 * DAY));
    const chunks = await collect(read(server, 4, { initialFrom: at(T0 + 3 * DAY) }));
    expect(server.requests).toEqual([0, 3, 6, 9].map((skip) => ({ fromDay: TODAY, toDay: TODAY, skip })));
    expect([...delivered(chunks).keys()].sort()).toEqual(server.order(TODAY).sort());
    expect(chunks.at(-1)!.cursor).toEqual({ mode: 'days', highWater: at(SERVER_NOW), spanDays: 1, window: null });
    // Inside the window the cursor names the next offset and the record expected there.
    expect(chunks[0]!.cursor.window).toMatchObject({ from: TODAY, to: TODAY, skip: 3, anchor: { key: 'a003' } });
    expect(() => dayCursorSchema.parse(chunks[0]!.cursor)).not.toThrow();
  });

  it('covers the range day by day, merging sparse days into one window as the span adapts', async () => {
    const server = new DayServer([0, 1, 2, 3].flatMap((d) => rows(`d${d}-`, 2, T0 + d * DAY)));
    const chunks = await collect(read(server, 10, { maxWindowMs: 4 * DAY }, { mode: 'days', highWater: at(T0), spanDays: 1, window: null }));
    // 1 day (2 records, far below the target of 4 pages) → 2 days → the remaining day.
    expect(server.requests.map((r) => [r.fromDay, r.toDay])).toEqual([
      ['2024-06-01', '2024-06-01'],
      ['2024-06-02', '2024-06-03'],
      ['2024-06-04', '2024-06-04'],
    ]);
    expect(delivered(chunks).size).toBe(8);
    expect(chunks[0]!.cursor).toMatchObject({ highWater: at(T0 + DAY), window: { from: '2024-06-02', to: '2024-06-03' } });
  });

  it('a lookback re-read day by day never stores a high-water mark behind the previous one', async () => {
    const server = new DayServer([0, 1, 2, 3].flatMap((d) => rows(`d${d}-`, 2, T0 + d * DAY)));
    // Read up to day 3, 08:00 before; a two-day lookback re-reads days 1 and 2 first, one at a time.
    const previous = T0 + 3 * DAY + 8 * HOUR;
    const chunks = await collect(read(server, 10, { lookbackMs: 2 * DAY }, { mode: 'days', highWater: at(previous), spanDays: 1, window: null }));
    expect(server.requests[0]).toMatchObject({ fromDay: '2024-06-02' });
    for (const chunk of chunks) expect(Date.parse(chunk.cursor.highWater!)).toBeGreaterThanOrEqual(previous);
    expect(chunks.at(-1)!.cursor).toMatchObject({ highWater: at(SERVER_NOW), window: null });
  });

  it('a record leaving a past day (updated onto today) costs one request, and nothing is lost', async () => {
    const server = new DayServer([...rows('p', 12, T0), ...rows('q', 2, T0 + 3 * DAY)]);
    server.beforeRequest = (n, s) => {
      // After the first page (p000..p003) was read: two records before the anchor move to today.
      if (n === 1) {
        s.update('p000', SERVER_NOW + HOUR);
        s.update('p002', SERVER_NOW + HOUR);
      }
    };
    const chunks = await collect(read(server, 4, { initialFrom: at(T0) }));
    const first = server.requests.filter((r) => r.fromDay === '2024-06-01').map((r) => r.skip);
    // skip 3 misses the anchor (p003 slid to 1) → one page back from 0 → on from its last record.
    expect(first).toEqual([0, 3, 0, 3, 6, 9]);
    const got = delivered(chunks);
    for (const id of server.rows.map((r) => r.id)) expect(got.has(id), id).toBe(true);
    // The new versions come with today's window, read after the past days.
    expect(got.get('p000')).toBe(1);
    expect(got.get('p002')).toBe(1);
  });

  it('records entering the window before the anchor (updated onto today) cost nothing extra', async () => {
    const server = new DayServer([...rows('old', 4, T0), ...rows('t', 9, T0 + 3 * DAY)]);
    server.beforeRequest = (n, s) => {
      // Old records created before every record of today: they enter today's window at its front.
      if (n === 2) for (const id of ['old000', 'old001']) s.update(id, SERVER_NOW + HOUR);
    };
    const chunks = await collect(read(server, 4, { initialFrom: at(T0 + 3 * DAY) }));
    expect(server.requests.map((r) => r.skip)).toEqual([0, 3, 6, 9]);
    const got = delivered(chunks);
    for (const id of server.order(TODAY).filter((id) => id.startsWith('t'))) expect(got.has(id), id).toBe(true);
  });

  it('an anchor that changed is not trusted: the previous page is searched for an unchanged record', async () => {
    const server = new DayServer(rows('a', 10, T0 + 3 * DAY));
    // The anchor (a003) changes in place: still at skip 3, but with new content.
    server.beforeRequest = (n, s) => n === 1 && s.update('a003', SERVER_NOW + HOUR);
    const chunks = await collect(read(server, 4, { initialFrom: at(T0 + 3 * DAY) }));
    expect(server.requests.map((r) => r.skip)).toEqual([0, 3, 0, 3, 6, 9]);
    expect(delivered(chunks).size).toBe(10);
  });

  it('resumes inside a day at the stored offset; an anchor gone since sends it back to the start', async () => {
    const server = new DayServer(rows('a', 10, T0 + 3 * DAY));
    const all = await collect(read(server, 4, { initialFrom: at(T0 + 3 * DAY) }));
    const inside = all[1]!.cursor;
    expect(inside.window).toMatchObject({ skip: 6, anchor: { key: 'a006' } });

    const resumed = new DayServer(server.rows.map((r) => ({ ...r })));
    const chunks = await collect(read(resumed, 4, {}, inside));
    expect(resumed.requests.map((r) => r.skip)).toEqual([6, 9]);
    expect([...delivered(chunks).keys()]).toEqual(['a006', 'a007', 'a008', 'a009']);

    const moved = new DayServer(server.rows.map((r) => ({ ...r })));
    moved.update('a006', SERVER_NOW + HOUR);
    const again = await collect(read(moved, 4, {}, inside));
    // skip 6: no a006 → one page back (3): none of the landmarks (only the anchor after a resume) → from 0.
    expect(moved.requests.map((r) => r.skip)).toEqual([6, 3, 0, 3, 6, 9]);
    expect(delivered(again).size).toBe(10);
  });

  it('gives up with SYNC_WINDOW_UNSTABLE when every offset brings the same page (a server ignoring skip)', async () => {
    const server = new DayServer(rows('p', 40, T0));
    server.ignoreSkip = true;
    const { chunks, error } = await collectUntilError(read(server, 4, { initialFrom: at(T0) }));
    expect(error).toBeInstanceOf(FreightSyncError);
    expect((error as FreightSyncError).code).toBe('SYNC_WINDOW_UNSTABLE');
    expect(String((error as Error).message)).toMatch(/stream loads: day window 2024-06-01 \.\. 2024-06-01 kept shifting/);
    expect(String((error as Error).message)).toMatch(/is skip honoured/);
    // Bounded: it does not loop for long before saying so, and never moves the cursor past the day.
    expect(server.requests.length).toBeLessThan(60);
    for (const chunk of chunks) expect(chunk.cursor.window?.from).toBe('2024-06-01');
  });

  it('whole pages leaving a past day between requests: read from the start again, nothing lost', async () => {
    const server = new DayServer([...rows('p', 40, T0), ...rows('q', 3, T0 + 3 * DAY)]);
    let stamp = SERVER_NOW + 1;
    server.beforeRequest = (n, s) => {
      // Before requests 1..3: the first eight records still on the day move to today.
      if (n >= 1 && n <= 3) for (const id of s.order('2024-06-01').slice(0, 8)) s.update(id, stamp++);
    };
    const chunks = await collect(read(server, 4, { initialFrom: at(T0) }));
    const got = delivered(chunks);
    for (const row of server.rows) expect(got.get(row.id), row.id).toBe(row.v);
  });

  it('takes over the closed-window cursor brokerage kept before, from where it stood', () => {
    expect(asDayCursor({ mode: 'window', highWater: at(T0), spanMs: HOUR, window: { from: at(T0 + HOUR), to: at(T0 + 2 * HOUR), rangeEnd: at(T0 + 3 * HOUR) } })).toEqual({
      mode: 'days',
      highWater: at(T0 + HOUR),
      spanDays: null,
      window: null,
    });
    expect(asDayCursor({ mode: 'window', highWater: at(T0), spanMs: null, window: null })).toMatchObject({ highWater: at(T0), window: null });
    expect(asDayCursor({ mode: 'keyset', highWater: at(T0), window: null })).toBeUndefined();
    expect(asDayCursor(undefined)).toBeUndefined();
  });

  it('under random changes between requests, every record last changed by the range end is delivered in that version', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rng = new Prng(seed);
      const server = new DayServer([0, 1, 2, 3].flatMap((d) => rows(`d${d}-`, 5 + rng.int(40), T0 + d * DAY)));
      let created = 0;
      let stamp = SERVER_NOW + 1;
      const pageSize = 3 + rng.int(10);
      server.beforeRequest = (n, s) => {
        // Up to a third of a page changes between two requests (a busy server, slow requests).
        for (let k = rng.int(Math.ceil(pageSize / 3) + 1); k > 0; k--) {
          const r = rng.next();
          if (r < 0.6) s.update(s.rows[rng.int(s.rows.length)]!.id, stamp++);
          else {
            // A new record: created now, sorted after every other.
            s.rows.push({ id: `new${created++}`, c: at(stamp), t: at(stamp), v: 0 });
            stamp++;
          }
        }
      };
      const chunks = await collect(read(server, pageSize, { initialFrom: at(T0), maxWindowMs: (1 + rng.int(4)) * DAY }));
      const got = delivered(chunks);
      // Rows changed after the range end (the server clock) are the next pass's: its range
      // starts at this one's end minus the lookback, so today is read again.
      for (const row of server.rows.filter((r) => Date.parse(r.t) <= SERVER_NOW)) expect(got.get(row.id), `seed ${seed}: ${row.id}`).toBe(row.v);
    }
  });
});
