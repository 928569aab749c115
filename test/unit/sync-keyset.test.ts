import { setImmediate as turnOfEventLoop } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ListPeekHandler } from '../../src/api/list-peek.js';
import type { Page } from '../../src/api/paging.js';
import { ConsumerDemand, readAhead } from '../../src/sync/read-ahead.js';
import { keysetCursorSchema, readKeyset, SortOrderError, type KeysetCursor, type KeysetSource } from '../../src/sync/strategies/keyset.js';
import type { Chunk, RawRecord } from '../../src/sync/stream-definition.js';
import { FreightSyncError } from '../../src/util/errors.js';
import { FakeApi } from '../helpers/fake-api.js';
import { at, collect, collectUntilError, env, HOUR, keysOf, page, plan, row, T0, type Row } from '../helpers/strategy-fakes.js';

/**
 * Keyset paging on updatedAt (design §2.1) against a scripted in-memory server: it answers
 * `updatedAt in [from, to]` sorted ascending (ties by id, like a stable index), records every
 * request, and lets a test move records between requests.
 */
const SERVER_NOW = T0 + 10 * HOUR;

interface FetchArgs {
  from: string;
  to: string;
  skip: number;
  limit: number;
}

class KeysetServer implements KeysetSource {
  readonly requests: FetchArgs[] = [];
  /** Runs before request number `n` (0-based) is answered. */
  beforeRequest: (n: number, server: KeysetServer) => void = () => {};
  /** Replaces the sorted answer (e.g. to ignore the sort). */
  answer: ((sorted: Row[], args: FetchArgs) => Page<RawRecord>) | undefined;

  constructor(public rows: Row[]) {}

  key = (r: RawRecord) => String(r.id);
  updatedAt = (r: RawRecord) => (typeof r.t === 'string' ? r.t : null);

  /** Shows each answer's elements to the reader before answering (as the API client does: page-speculation.ts). */
  readonly peeking = peekingServers;
  /** Requests whose signal the reader aborted, answered or not (a next page asked for ahead that it did not use). */
  aborted = 0;

  async fetch(args: { from: string; to: string; skip: number; limit: number; signal: AbortSignal; peek?: ListPeekHandler }): Promise<Page<RawRecord>> {
    const req = { from: args.from, to: args.to, skip: args.skip, limit: args.limit };
    this.beforeRequest(this.requests.length, this);
    this.requests.push(req);
    const lo = Date.parse(args.from);
    const hi = Date.parse(args.to);
    const sorted = this.rows
      .filter((r) => Date.parse(r.t) >= lo && Date.parse(r.t) <= hi)
      .sort((a, b) => Date.parse(a.t) - Date.parse(b.t) || a.id.localeCompare(b.id));
    // `/loads` has no count: the strategy must stop at a short page.
    const answer = this.answer ? this.answer(sorted, req) : page(sorted.slice(args.skip, args.skip + args.limit));
    if (this.peeking && args.peek) {
      // The bytes come from the network: in a later turn of the event loop than the request. The
      // reader may then want them kept unparsed until its engine waits.
      if (args.peek.whenWanted) {
        await turnOfEventLoop();
        await args.peek.whenWanted(args.signal);
      }
      const elements: unknown[] = [...answer.items];
      for (const rejected of [...answer.rejected].sort((a, b) => a.index - b.index)) elements.splice(rejected.index, 0, rejected.raw);
      args.peek({ count: elements.length, element: (i) => structuredClone(elements[i]) });
      await turnOfEventLoop();
    }
    args.signal.addEventListener('abort', () => (this.aborted += 1), { once: true });
    return answer;
  }

  /** Updates a row: a new version (records delivered before keep the old one). */
  move(id: string, ms: number): void {
    const i = this.rows.findIndex((x) => x.id === id);
    if (i < 0) throw new Error(`no row ${id}`);
    this.rows[i] = { ...this.rows[i]!, t: at(ms) };
  }
}

function read(server: KeysetServer, pageSize: number, cursor?: KeysetCursor, fake = new FakeApi('main', SERVER_NOW)) {
  return readKeyset('loads', server, env(fake, {}, pageSize), cursor, plan(), new AbortController().signal);
}

const MIN = 60_000;

/** A small seeded generator (mulberry32), so a failing case can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whether servers made by the test running now show their answers early (set per describe.each variant). */
let peekingServers = false;

describe.each([
  { peeking: false, name: 'readKeyset' },
  { peeking: true, name: 'readKeyset, next page asked for while the page is parsed' },
])('$name', ({ peeking }) => {
  beforeEach(() => {
    peekingServers = peeking;
  });

  it('pages ascending from the last updatedAt seen and delivers every record once', async () => {
    const server = new KeysetServer([row('a', T0 + 1 * MIN), row('b', T0 + 2 * MIN), row('c', T0 + 3 * MIN), row('d', T0 + 4 * MIN), row('e', T0 + 5 * MIN)]);
    const chunks = await collect(read(server, 2));
    expect(keysOf(chunks)).toEqual(['a', 'b', 'c', 'd', 'e']);
    // Each next page starts AT the last updatedAt seen (inclusive), not at an offset; the
    // boundary record comes back first and is dropped by id (the price of inclusive bounds).
    expect(server.requests.map((r) => [r.from, r.skip])).toEqual([
      [at(T0), 0],
      [at(T0 + 2 * MIN), 0],
      [at(T0 + 3 * MIN), 0],
      [at(T0 + 4 * MIN), 0],
      [at(T0 + 5 * MIN), 0],
    ]);
    expect(server.requests.every((r) => r.to === at(SERVER_NOW) && r.limit === 2)).toBe(true);
    // The short page closes the range: the checkpoint moves to the range end.
    expect(chunks.at(-1)!.cursor).toEqual({ mode: 'keyset', highWater: at(SERVER_NOW), window: null });
  });

  it('keeps the range position in the cursor after each full page', async () => {
    const server = new KeysetServer([row('a', T0 + MIN), row('b', T0 + 2 * MIN), row('c', T0 + 3 * MIN)]);
    const chunks = await collect(read(server, 2));
    expect(chunks[0]!.cursor).toEqual({
      mode: 'keyset',
      highWater: null,
      window: { from: at(T0), to: at(SERVER_NOW), lower: at(T0 + 2 * MIN), seenAtLower: ['b'] },
    });
  });

  it('handles more records at one timestamp than fit on a page: the boundary offset skips all seen but one', async () => {
    const T = T0 + 10 * MIN;
    const server = new KeysetServer([row('r0', T0 + MIN), row('r1', T), row('r2', T), row('r3', T), row('r4', T), row('r5', T), row('r6', T + MIN), row('r7', T + 2 * MIN)]);
    const chunks = await collect(read(server, 3));
    expect(keysOf(chunks).sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
    expect(new Set(keysOf(chunks)).size).toBe(keysOf(chunks).length);
    // Page 1: r0 r1 r2 → 2 seen at T, skip 1; page 2: r2 r3 r4 → 4 seen at T, skip 3; page 3: r4 r5 r6
    // → lower moves to T+1min with 1 seen, skip 0.
    expect(server.requests.map((r) => [r.from, r.skip])).toEqual([
      [at(T0), 0],
      [at(T), 1],
      [at(T), 3],
      [at(T + MIN), 0],
    ]);
  });

  it('re-reads the page from offset 0 when a boundary record moved away since it was read', async () => {
    const T = T0 + 10 * MIN;
    const server = new KeysetServer([row('r1', T), row('r2', T), row('r3', T), row('r4', T + MIN), row('r5', T + 2 * MIN)]);
    server.beforeRequest = (n, s) => {
      // Between page 1 and 2 r1 is updated (its updatedAt moves past the range end).
      if (n === 1) s.move('r1', SERVER_NOW + HOUR);
    };
    const chunks = await collect(read(server, 3));
    expect(server.requests.map((r) => [r.from, r.skip])).toEqual([
      [at(T0), 0],
      [at(T), 2], // seen r1 r2 r3 at T → skip 2: answers r4 r5 — the first is not a seen boundary record
      [at(T), 0], // so the same page is read again from 0
      [at(T + MIN), 0],
    ]);
    expect(chunks[1]!.pages).toBe(2);
    expect(chunks[1]!.batchId).toBe(`${at(T0)}_${at(SERVER_NOW)}_${at(T)}_0`);
    expect(keysOf(chunks)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('the re-read is what prevents a loss when two boundary records moved', async () => {
    // Seen at T: {r1, r2, r3}, skip 2. r1 and r2 leave: [r3, r4, r5] — offset 2 is r5, and r4
    // (never seen) would be skipped for good. The guard notices r5 is not a boundary record.
    const T = T0 + 10 * MIN;
    const server = new KeysetServer([row('r1', T), row('r2', T), row('r3', T), row('r4', T), row('r5', T + MIN)]);
    server.beforeRequest = (n, s) => {
      if (n === 1) {
        s.move('r1', SERVER_NOW + HOUR);
        s.move('r2', SERVER_NOW + HOUR);
      }
    };
    const chunks = await collect(read(server, 3));
    expect(server.requests.slice(1, 3).map((r) => r.skip)).toEqual([2, 0]);
    expect(keysOf(chunks)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  // Seen at T: {r1 r2 r3}, and r1 leaves: the re-read from 0 is [r2 r3 r4], a full page at T. The
  // next offset must count only the delivered records still there (r2 r3 r4 → skip 2 → r4 r5),
  // not r1 too (skip 3 → r5 alone, mismatch, re-read, nothing new: SYNC_NO_PROGRESS, with r5
  // never read and the committed cursor repeating it on every later run).
  it('does not report SYNC_NO_PROGRESS when a boundary record left and a full page of ties remains', async () => {
    const T = T0 + 10 * MIN;
    const server = new KeysetServer([row('r1', T), row('r2', T), row('r3', T), row('r4', T), row('r5', T + MIN)]);
    server.beforeRequest = (n, s) => {
      if (n === 1) s.move('r1', SERVER_NOW + HOUR);
    };
    const chunks = await collect(read(server, 3));
    expect(keysOf(chunks)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
    expect(server.requests.map((r) => [r.from, r.skip])).toEqual([
      [at(T0), 0],
      [at(T), 2], // r4 r5: r4 was not delivered, so the offset is not safe
      [at(T), 0], // r2 r3 r4
      [at(T), 2], // r4 r5
    ]);
    expect(chunks[1]!.cursor.window).toMatchObject({ lower: at(T), seenAtLower: ['r2', 'r3', 'r4'] });
  });

  it('follows a boundary larger than a page from its start when a record left it, and delivers the one that left at its new updatedAt', async () => {
    const T = T0 + 10 * MIN;
    const ids = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8'];
    const server = new KeysetServer([...ids.map((id) => row(id, T)), row('r9', T + 2 * MIN)]);
    server.beforeRequest = (n, s) => {
      // After r1..r5 were delivered, r1 is updated: it moves inside the range, after the ties.
      if (n === 2) s.move('r1', T + MIN);
    };
    const chunks = await collect(read(server, 3));
    expect(server.requests.map((r) => [r.from, r.skip])).toEqual([
      [at(T0), 0], // r1 r2 r3
      [at(T), 2], // r3 r4 r5
      [at(T), 4], // r6 r7 r8 (r1 left): r6 was not delivered
      [at(T), 0], // r2 r3 r4: all delivered, the page does not show where the delivered ones end
      [at(T), 2], // r4 r5 r6: it does; this is the page delivered
      [at(T), 4], // r6 r7 r8
      [at(T), 6], // r8 r1 r9
      [at(T + 2 * MIN), 0], // r9
    ]);
    expect(chunks[2]!.pages).toBe(3);
    expect(keysOf([chunks[2]!])).toEqual(['r6']);
    // r1 twice: its first version at T and its update at T+1min; every other record once.
    expect(keysOf(chunks)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r1', 'r9']);
    expect(chunks.flatMap((c) => c.records).filter((r) => r.id === 'r1').map((r) => r.t)).toEqual([at(T), at(T + MIN)]);
    expect(chunks.at(-1)!.cursor).toEqual({ mode: 'keyset', highWater: at(SERVER_NOW), window: null });
  });

  it('resumes from a cursor stored by the old code that still counts a record that left (the stuck checkpoint)', async () => {
    const T = T0 + 10 * MIN;
    const stored = { mode: 'keyset', highWater: null, window: { from: at(T0), to: at(T0 + HOUR), lower: at(T), seenAtLower: ['r1', 'r2', 'r3', 'r4'] } };
    const cursor = keysetCursorSchema.parse(JSON.parse(JSON.stringify(stored)));
    const server = new KeysetServer([row('r1', T0 + 2 * HOUR), row('r2', T), row('r3', T), row('r4', T), row('r5', T + MIN)]);
    const chunks = await collect(read(server, 3, cursor, new FakeApi('main', SERVER_NOW, false)));
    expect(server.requests.map((r) => r.skip)).toEqual([3, 0, 2]);
    expect(keysOf(chunks)).toEqual(['r5']);
    expect(chunks.at(-1)!.cursor).toEqual({ mode: 'keyset', highWater: at(T0 + HOUR), window: null });
  });

  it('throws SYNC_NO_PROGRESS when the server ignores the offset while the boundary is followed from its start', async () => {
    const T = T0;
    const server = new KeysetServer(['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => row(id, T)));
    server.beforeRequest = (n, s) => {
      if (n === 2) s.move('r1', SERVER_NOW + HOUR);
    };
    server.answer = (sorted, args) => {
      const skip = server.requests.length > 4 ? 0 : args.skip; // from request 5 on, the offset is ignored
      return page(sorted.slice(skip, skip + args.limit));
    };
    const { chunks, error } = await collectUntilError(read(server, 2));
    expect((error as FreightSyncError).code).toBe('SYNC_NO_PROGRESS');
    expect(server.requests.map((r) => r.skip)).toEqual([0, 1, 2, 0, 1]);
    expect(keysOf(chunks)).toEqual(['r1', 'r2', 'r3']);
  });

  it('throws SYNC_NO_PROGRESS after a few restarts when the boundary keeps changing under the offset', async () => {
    const T = T0;
    const server = new KeysetServer(['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((id) => row(id, T)));
    server.beforeRequest = (n, s) => {
      if (n === 2) s.move('r1', SERVER_NOW + HOUR);
    };
    // From request 3 on, every answer at an offset starts one record too far.
    server.answer = (sorted, args) => {
      const skip = server.requests.length > 2 && args.skip > 0 ? args.skip + 1 : args.skip;
      return page(sorted.slice(skip, skip + args.limit));
    };
    const { chunks, error } = await collectUntilError(read(server, 2));
    expect((error as FreightSyncError).code).toBe('SYNC_NO_PROGRESS');
    expect(server.requests.map((r) => r.skip)).toEqual([0, 1, 2, 0, 1, 0, 1, 0, 1, 0, 1]);
    expect(keysOf(chunks)).toEqual(['r1', 'r2', 'r3']);
  });

  it('loses nothing and never stops while records at shared timestamps are updated at random during paging (stable order)', async () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const rnd = prng(seed);
      const rows = Array.from({ length: 5 + Math.floor(rnd() * 25) }, (_, i) => row(`r${String(i).padStart(2, '0')}`, T0 + (1 + Math.floor(rnd() * 3)) * MIN));
      const server = new KeysetServer(rows);
      let now = T0 + 5 * HOUR;
      server.beforeRequest = (_n, s) => {
        if (rnd() < 0.4) {
          const victim = s.rows[Math.floor(rnd() * s.rows.length)]!;
          now += 1000;
          // Mostly an update inside the range (read again later), sometimes past its end.
          s.move(victim.id, rnd() < 0.8 ? now : SERVER_NOW + HOUR);
        }
      };
      const chunks = await collect(read(server, 2 + Math.floor(rnd() * 4)));
      const delivered = chunks.flatMap((c) => c.records).map((r) => `${String(r.id)}@${String(r.t)}`);
      const expected = server.rows.filter((r) => Date.parse(r.t) <= SERVER_NOW).map((r) => `${r.id}@${r.t}`);
      expect(expected.filter((v) => !delivered.includes(v)), `seed ${seed}: lost`).toEqual([]);
      expect(new Set(delivered).size, `seed ${seed}: a version delivered twice`).toBe(delivered.length);
    }
  });

  it('terminates when the server answers ties in a different order on every request', async () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      const rnd = prng(seed);
      const server = new KeysetServer(Array.from({ length: 12 }, (_, i) => row(`r${i}`, T0 + (1 + Math.floor(rnd() * 2)) * MIN)));
      server.answer = (sorted, args) => {
        const shuffled = [...sorted].sort((a, b) => Date.parse(a.t) - Date.parse(b.t) || rnd() - 0.5);
        return page(shuffled.slice(args.skip, args.skip + args.limit));
      };
      try {
        await collect(read(server, 3));
      } catch (error) {
        expect((error as FreightSyncError).code, `seed ${seed}`).toBe('SYNC_NO_PROGRESS');
      }
      expect(server.requests.length, `seed ${seed}`).toBeLessThan(500);
    }
  });

  it('throws SYNC_NO_PROGRESS when a record found to have left the boundary is back there (unstable order), instead of cycling', async () => {
    // The order of the ties at T cycles with the request number. Request 2 (from 0) shows a d b:
    // c looks as if it had left. Request 4 shows a b c: c is back. Delivering c again would make
    // requests 5..8 repeat 1..4 for ever.
    const T = T0 + MIN;
    const server = new KeysetServer([row('a', T), row('b', T), row('c', T), row('d', T), row('e', T + MIN)]);
    const orders = [['a', 'b', 'c', 'd'], ['a', 'b', 'd', 'c'], ['a', 'd', 'b', 'c'], ['a', 'b', 'c', 'd']];
    // Requests past the boundary (from e's updatedAt) do not turn the cycle: the peeking variant
    // asks for one ahead when a page ends with e, and the reader never uses it here.
    const atBoundary = () => server.requests.filter((r) => r.from !== at(T + MIN));
    server.answer = (sorted, args) => {
      const order = [...orders[(atBoundary().length - 1) % 4]!, 'e'];
      const ordered = order.map((id) => sorted.find((r) => r.id === id)!).filter(Boolean);
      return page(ordered.slice(args.skip, args.skip + args.limit));
    };
    const { chunks, error } = await collectUntilError(read(server, 3));
    expect((error as FreightSyncError).code).toBe('SYNC_NO_PROGRESS');
    expect(atBoundary().map((r) => r.skip)).toEqual([0, 2, 0, 2, 0]);
    expect(keysOf(chunks)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('throws SortOrderError (SYNC_SORT_IGNORED) when the server ignores the ascending sort', async () => {
    const server = new KeysetServer([row('a', T0 + MIN), row('b', T0 + 2 * MIN), row('c', T0 + 3 * MIN)]);
    server.answer = (sorted, args) => page([...sorted].reverse().slice(args.skip, args.skip + args.limit));
    const { chunks, error } = await collectUntilError(read(server, 5));
    expect(error).toBeInstanceOf(SortOrderError);
    expect((error as SortOrderError).code).toBe('SYNC_SORT_IGNORED');
    expect((error as Error).message).toContain('stream loads');
    // Nothing was delivered from the disordered page, so no checkpoint can advance past lost data.
    expect(chunks).toEqual([]);
  });

  it('ignores records without updatedAt when checking the order', async () => {
    const server = new KeysetServer([]);
    server.answer = () => page([{ id: 'x', t: at(T0 + 2 * MIN) }, { id: 'nodate' }, { id: 'y', t: at(T0 + 3 * MIN) }]);
    const chunks = await collect(read(server, 5));
    expect(keysOf(chunks)).toEqual(['x', 'nodate', 'y']);
  });

  it('throws SYNC_NO_PROGRESS when a full page at the boundary brings nothing new', async () => {
    // Four records share one timestamp and the server's order among them is not stable: whatever
    // the offset, it answers the same two. The strategy must stop rather than loop forever.
    const T = T0;
    const server = new KeysetServer([row('r1', T), row('r2', T), row('r3', T), row('r4', T)]);
    server.answer = (sorted) => page(sorted.slice(0, 2));
    const { chunks, error } = await collectUntilError(read(server, 2));
    expect(error).toBeInstanceOf(FreightSyncError);
    expect((error as FreightSyncError).code).toBe('SYNC_NO_PROGRESS');
    expect(keysOf(chunks)).toEqual(['r1', 'r2']);
    expect(server.requests.map((r) => r.skip)).toEqual([0, 1]);
  });

  it('counts rejected elements toward a full page (a page of bad records is not the last page)', async () => {
    const server = new KeysetServer([row('a', T0 + MIN), row('b', T0 + 2 * MIN), row('c', T0 + 3 * MIN)]);
    let first = true;
    server.answer = (sorted, args) => {
      if (first) {
        first = false;
        return page([sorted[0]!], { rejected: [{ index: 1, problem: 'bad', raw: {} }] });
      }
      return page(sorted.slice(args.skip, args.skip + args.limit));
    };
    const chunks = await collect(read(server, 2));
    expect(chunks[0]!.rejected).toHaveLength(1);
    expect(chunks[0]!.cursor.window).not.toBeNull();
    expect(keysOf(chunks)).toEqual(['a', 'b', 'c']);
  });

  it('resumes a range in progress from the cursor, without asking for the clock again', async () => {
    const T = T0 + 10 * MIN;
    const server = new KeysetServer([row('r1', T), row('r2', T), row('r3', T + MIN)]);
    const fake = new FakeApi('main', SERVER_NOW, false); // no handlers: any API call would fail
    const cursor: KeysetCursor = { mode: 'keyset', highWater: null, window: { from: at(T0), to: at(T0 + HOUR), lower: at(T), seenAtLower: ['r1', 'r2'] } };
    const chunks = await collect(read(server, 5, cursor, fake));
    expect(server.requests).toEqual([{ from: at(T), to: at(T0 + HOUR), skip: 1, limit: 5 }]);
    expect(keysOf(chunks)).toEqual(['r3']);
    expect(chunks[0]!.cursor).toEqual({ mode: 'keyset', highWater: at(T0 + HOUR), window: null });
    expect(fake.calls).toEqual([]);
  });

  it('makes no request when the range is empty', async () => {
    const server = new KeysetServer([row('a', T0)]);
    const cursor: KeysetCursor = { mode: 'keyset', highWater: at(SERVER_NOW), window: null };
    expect(await collect(read(server, 5, cursor))).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it('reads the server clock first when it is unknown, and ends the range at it', async () => {
    const fake = new FakeApi('main', SERVER_NOW, false).on('GET /load-document-type', () => ({ data: [] }));
    const server = new KeysetServer([row('a', T0 + MIN)]);
    await collect(read(server, 5, undefined, fake));
    expect(fake.callsTo('GET /load-document-type')).toHaveLength(1);
    expect(server.requests[0]!.to).toBe(at(SERVER_NOW));
  });
});

/** The number of requests made by the time each answer is handed to the reader. */
function requestsMadeWhenAnswered(server: KeysetServer): number[] {
  const made: number[] = [];
  const fetch = server.fetch.bind(server);
  server.fetch = async (args) => {
    const answer = await fetch(args);
    made.push(server.requests.length);
    return answer;
  };
  return made;
}

describe('readKeyset asks for the next page while the page is parsed (page-speculation.ts)', () => {
  beforeEach(() => {
    peekingServers = true;
  });

  it('sends request n+1 before answer n is handed over, and uses its answer: no request more than without', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => row(`r${i}`, T0 + (i + 1) * MIN));
    const server = new KeysetServer(rows);
    const madeWhenAnswered = requestsMadeWhenAnswered(server);
    const chunks = await collect(read(server, 3));
    expect(keysOf(chunks)).toEqual(rows.map((r) => r.id));
    // Each page starts at the last updatedAt of the one before (inclusive: one record again), so
    // pages end at r2, r4, r6, r8 and a short fifth ends the range. While answer 1 was parsed,
    // request 2 went out. This server answers at once, so answer 2 was in before the reader asked
    // for request 2: an answer nobody waits for yet starts nothing (never two pages ahead), and
    // request 3 goes out when the reader asks; answer 3 starts request 4 the same way as 1 did 2.
    // The short answer starts nothing.
    expect(server.requests.slice(1).map((r) => r.from)).toEqual([at(T0 + 3 * MIN), at(T0 + 5 * MIN), at(T0 + 7 * MIN), at(T0 + 9 * MIN)]);
    expect(madeWhenAnswered).toEqual([2, 2, 4, 4, 5]);
    expect(server.aborted).toBe(0);
    expect(chunks.reduce((n, c) => n + c.pages, 0)).toBe(5);
  });

  it('drops a wrong guess (the last element is rejected, the next page starts at the last valid one) and counts its request', async () => {
    const server = new KeysetServer([row('a', T0 + MIN), row('b', T0 + 2 * MIN), row('c', T0 + 3 * MIN), row('d', T0 + 4 * MIN)]);
    let first = true;
    server.answer = (sorted, args) => {
      if (first) {
        first = false;
        // The third element fails validation: its updatedAt (c's) is what the guess sees.
        return page([sorted[0]!, sorted[1]!], { rejected: [{ index: 2, problem: 'bad', raw: { ...sorted[2]!, id: 'c' } }] });
      }
      return page(sorted.slice(args.skip, args.skip + args.limit));
    };
    const chunks = await collect(read(server, 3));
    expect(keysOf(chunks)).toEqual(['a', 'b', 'c', 'd']);
    // Guessed from c, asked from b (the last valid record): the guess was aborted, its request counted.
    expect(server.requests.slice(0, 3).map((r) => r.from)).toEqual([server.requests[0]!.from, at(T0 + 3 * MIN), at(T0 + 2 * MIN)]);
    expect(server.aborted).toBe(1);
    expect(chunks.reduce((n, c) => n + c.pages, 0)).toBe(server.requests.length);
  });

  it('does not guess at the lower bound (the boundary rules decide the offset there) nor after a short page', async () => {
    const T = T0 + MIN;
    const server = new KeysetServer([row('a', T), row('b', T), row('c', T), row('d', T), row('e', T), row('f', T + MIN)]);
    const cursor: KeysetCursor = { mode: 'keyset', highWater: null, window: { from: at(T0), to: at(T0 + HOUR), lower: at(T), seenAtLower: [] } };
    const chunks = await collect(read(server, 2, cursor));
    expect(keysOf(chunks)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(server.aborted).toBe(0);
    expect(chunks.reduce((n, c) => n + c.pages, 0)).toBe(server.requests.length);
  });

  it('ahead of a busy engine (a slow sink), holds each answer unparsed until the engine waits for it, and only then asks for the next', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => row(`r${i}`, T0 + (i + 1) * MIN));
    const server = new KeysetServer(rows);
    const madeWhenAnswered = requestsMadeWhenAnswered(server);
    const demand = new ConsumerDemand();
    const wantedWhenAnswered: boolean[] = [];
    const fetch = server.fetch.bind(server);
    server.fetch = async (args) => {
      const answer = await fetch(args);
      wantedWhenAnswered.push(demand.waiting);
      return answer;
    };
    const reader = readKeyset('loads', server, { ...env(new FakeApi('main', SERVER_NOW), {}, 3), demand }, undefined, plan(), new AbortController().signal);
    const keys: string[] = [];
    for await (const chunk of readAhead(reader, demand)) {
      keys.push(...chunk.records.map((r) => String(r.id)));
      // The sink takes longer than a page's read: the next answer comes in meanwhile.
      for (let i = 0; i < 10; i += 1) await turnOfEventLoop();
    }
    expect(keys).toEqual(rows.map((r) => r.id));
    // Every answer was parsed and handed over while the engine waited for it (read-ahead.ts:
    // parsed earlier, its records outlive young-generation collections), the ones asked for ahead
    // included: those wait for the reader to claim them first.
    expect(wantedWhenAnswered).toEqual([true, true, true, true, true]);
    // Each answer, once the engine waited, sent the request after it before its parse (request
    // n+1 made when answer n is handed over); none is made more than without asking ahead.
    expect(madeWhenAnswered).toEqual([2, 3, 4, 5, 5]);
    expect(server.requests).toHaveLength(5);
    expect(server.aborted).toBe(0);
  });

  it("lets go of each page's records once its chunk is handed over; the chunk keeps its own array, marked releasable", async () => {
    const rows = Array.from({ length: 7 }, (_, i) => row(`r${i}`, T0 + (i + 1) * MIN));
    const server = new KeysetServer(rows);
    const pages: Page<RawRecord>[] = [];
    const fetch = server.fetch.bind(server);
    server.fetch = async (args) => {
      const answer = await fetch(args);
      pages.push(answer);
      return answer;
    };
    const chunks: Chunk<KeysetCursor>[] = [];
    for await (const chunk of read(server, 3)) chunks.push(chunk);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.map((p) => p.items.length)).toEqual(pages.map(() => 0));
    // The chunks' own arrays are intact (the engine empties them once delivered: stream-runner.ts).
    expect(keysOf(chunks)).toEqual(rows.map((r) => r.id));
    expect(chunks.every((c) => c.recordsReleasable === true)).toBe(true);
  });

  it('aborts the request asked for ahead when the reader stops after a page', async () => {
    const server = new KeysetServer(Array.from({ length: 9 }, (_, i) => row(`r${i}`, T0 + (i + 1) * MIN)));
    for await (const chunk of read(server, 3)) {
      expect(chunk.records).toHaveLength(3);
      break;
    }
    await turnOfEventLoop();
    expect(server.requests).toHaveLength(2);
    expect(server.aborted).toBe(1);
  });
});
