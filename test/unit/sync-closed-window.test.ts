import { describe, expect, it } from 'vitest';
import type { Page } from '../../src/api/paging.js';
import { readClosedWindows, type WindowCursor, type WindowSource } from '../../src/sync/strategies/closed-window.js';
import type { RawRecord, RunPlan } from '../../src/sync/stream-definition.js';
import { FreightSyncError } from '../../src/util/errors.js';
import { FakeApi } from '../helpers/fake-api.js';
import { at, collect, collectUntilError, env, HOUR, keysOf, page, plan, row, T0, type Row } from '../helpers/strategy-fakes.js';

/**
 * Closed windows (design §2.1) against a scripted in-memory server that honours no sort: it
 * answers the rows whose timestamp lies in [from, to] (inclusive) in storage order, with `count`
 * unless told otherwise, and records every request. Tests move rows between requests.
 */
interface FetchArgs {
  from: string;
  to: string;
  skip: number;
  limit: number | null;
}

class WindowServer implements WindowSource {
  readonly requests: FetchArgs[] = [];
  beforeRequest: (n: number, server: WindowServer) => void = () => {};
  /** Overrides `count` of every answer (e.g. a count that keeps changing). */
  countOverride: ((n: number, real: number) => number | undefined) | undefined;

  /** Set by tests of sources whose every answer carries `count` (bills, support moves). */
  countOnEveryPage = false;

  constructor(
    public rows: Row[],
    readonly paged = true,
    private readonly withCount = true,
  ) {}

  key = (r: RawRecord) => String(r.id);

  async fetch(args: { from: string; to: string; skip: number; limit: number | null; signal: AbortSignal }): Promise<Page<RawRecord>> {
    const n = this.requests.length;
    this.beforeRequest(n, this);
    this.requests.push({ from: args.from, to: args.to, skip: args.skip, limit: args.limit });
    const lo = Date.parse(args.from);
    const hi = Date.parse(args.to);
    const matching = this.rows.filter((r) => Date.parse(r.t) >= lo && Date.parse(r.t) <= hi);
    const items = args.limit === null ? matching : matching.slice(args.skip, args.skip + args.limit);
    const count = this.countOverride ? this.countOverride(n, matching.length) : this.withCount ? matching.length : undefined;
    return page(items.map((r) => ({ ...r })), { count });
  }

  move(id: string, ms: number): void {
    const r = this.rows.find((x) => x.id === id);
    if (!r) throw new Error(`no row ${id}`);
    r.t = at(ms);
  }

  windows(): Array<[string, string]> {
    return this.requests.map((r) => [r.from, r.to]);
  }
}

const SERVER_NOW = T0 + 8 * HOUR;

function read(server: WindowServer, pageSize: number, p: Partial<RunPlan> = {}, cursor?: WindowCursor) {
  const fake = new FakeApi('main', SERVER_NOW);
  return readClosedWindows('bills', server, env(fake, {}, pageSize), cursor, plan({ maxWindowMs: 8 * HOUR, minWindowMs: HOUR, ...p }), new AbortController().signal);
}

/** `n` rows spread over the first `spanMs` after `start`. */
function rows(prefix: string, n: number, start: number, spanMs: number): Row[] {
  return Array.from({ length: n }, (_, i) => row(`${prefix}${String(i).padStart(2, '0')}`, start + Math.floor((i * spanMs) / n)));
}

function unique(keys: string[]): string[] {
  return [...new Set(keys)].sort();
}

describe('readClosedWindows', () => {
  it('reads a window that fits one page with one request and moves on', async () => {
    const server = new WindowServer(rows('a', 3, T0, 8 * HOUR));
    const chunks = await collect(read(server, 5));
    expect(server.windows()).toEqual([[at(T0), at(SERVER_NOW)]]);
    expect(keysOf(chunks)).toEqual(['a00', 'a01', 'a02']);
    expect(chunks.at(-1)!.cursor).toMatchObject({ mode: 'window', highWater: at(SERVER_NOW), window: null });
  });

  it('halves a window that does not fit, down to minWindow, delivering each page it read', async () => {
    // 10 rows in the first 30 minutes, page of 4: 8h → 4h → 2h → 1h (= minWindow), then paged.
    const server = new WindowServer(rows('b', 10, T0, 30 * 60_000));
    const chunks = await collect(read(server, 4));
    expect(server.windows().slice(0, 4)).toEqual([
      [at(T0), at(T0 + 8 * HOUR)],
      [at(T0), at(T0 + 4 * HOUR)],
      [at(T0), at(T0 + 2 * HOUR)],
      [at(T0), at(T0 + HOUR)],
    ]);
    // The split chunks carry the page read before the split (deduplicated downstream) and a
    // cursor pointing at the smaller window, so a crash resumes at the smaller size.
    expect(chunks.slice(0, 3).map((c) => c.batchId)).toEqual([
      `${at(T0)}_${at(T0 + 8 * HOUR)}_split`,
      `${at(T0)}_${at(T0 + 4 * HOUR)}_split`,
      `${at(T0)}_${at(T0 + 2 * HOUR)}_split`,
    ]);
    expect(chunks.slice(0, 3).map((c) => c.records.length)).toEqual([4, 4, 4]);
    expect(chunks[0]!.cursor).toMatchObject({ spanMs: 4 * HOUR, window: { from: at(T0), to: at(T0 + 4 * HOUR) } });
    expect(unique(keysOf(chunks))).toEqual(unique(server.rows.map((r) => r.id)));
    // Never smaller than minWindow.
    for (const r of server.requests) expect(Date.parse(r.to) - Date.parse(r.from)).toBeGreaterThanOrEqual(HOUR);
  });

  it('at minWindow pages the window by offset and re-reads until the count is stable', async () => {
    const server = new WindowServer(rows('c', 10, T0, 30 * 60_000));
    const chunks = await collect(read(server, 4, { maxWindowMs: HOUR, minWindowMs: HOUR }));
    const first = server.requests.filter((r) => r.to === at(T0 + HOUR));
    // first page, two more pages, then one re-read at offset 0 that sees the same count.
    expect(first.map((r) => r.skip)).toEqual([0, 4, 8, 0]);
    const paged = chunks.filter((c) => c.batchId.includes('_p'));
    expect(paged.map((c) => c.batchId)).toEqual([
      `${at(T0)}_${at(T0 + HOUR)}_p1_s0`,
      `${at(T0)}_${at(T0 + HOUR)}_p1_s4`,
      `${at(T0)}_${at(T0 + HOUR)}_p1_s8`,
    ]);
    // Pages are delivered with the cursor still on this window: a crash re-reads it.
    for (const c of paged) expect(c.cursor.window).toMatchObject({ from: at(T0), to: at(T0 + HOUR) });
    expect(unique(keysOf(chunks))).toEqual(unique(server.rows.map((r) => r.id)));
    // The window's closing chunk carries no records (they were delivered page by page) and moves on.
    const closing = chunks.find((c) => c.batchId === `${at(T0)}_${at(T0 + HOUR)}`)!;
    expect(closing.records).toEqual([]);
    expect(closing.cursor.window?.from).toBe(at(T0 + HOUR));
  });

  it('re-reads when a record leaves the window while it is paged, and delivers the record that shifted', async () => {
    const server = new WindowServer(rows('d', 10, T0, 30 * 60_000));
    server.beforeRequest = (n, s) => {
      // After pages at 0 and 4 were read, d00 is updated and leaves the window: d08 shifts to
      // offset 7, which was already read, so the page at 8 misses it.
      if (n === 2) s.move('d00', SERVER_NOW + HOUR);
    };
    const chunks = await collect(read(server, 4, { maxWindowMs: HOUR, minWindowMs: HOUR }));
    const inWindow = server.requests.filter((r) => r.to === at(T0 + HOUR)).map((r) => r.skip);
    // pass 1: 0, 4, 8, re-read 0 (count 10 → 9) ; pass 2: 4, 8, re-read 0 (count 9 = 9) → stable.
    expect(inWindow).toEqual([0, 4, 8, 0, 4, 8, 0]);
    expect(chunks.some((c) => c.batchId.includes('_p2_'))).toBe(true);
    expect(unique(keysOf(chunks))).toEqual(unique(server.rows.map((r) => r.id)));
  });

  it('without a count, reads the window until two passes agree (no unseen key)', async () => {
    const server = new WindowServer(rows('e', 10, T0, 30 * 60_000), true, false);
    const chunks = await collect(read(server, 4, { maxWindowMs: HOUR, minWindowMs: HOUR }));
    const inWindow = server.requests.filter((r) => r.to === at(T0 + HOUR)).map((r) => r.skip);
    // pass 1: 0 4 8 + re-read; pass 2 continues from the re-read: 4 8 + re-read; nothing new → done.
    expect(inWindow).toEqual([0, 4, 8, 0, 4, 8, 0]);
    expect(unique(keysOf(chunks))).toEqual(unique(server.rows.map((r) => r.id)));
  });

  it('ends the re-reads when a pass sees no unseen key, even if the count changed', async () => {
    const server = new WindowServer(rows('f', 10, T0, 30 * 60_000));
    server.countOverride = (n) => 10 + n;
    const chunks = await collect(read(server, 4, { maxWindowMs: HOUR, minWindowMs: HOUR }));
    expect(server.requests.filter((r) => r.to === at(T0 + HOUR)).map((r) => r.skip)).toEqual([0, 4, 8, 0, 4, 8, 0]);
    expect(chunks.at(-1)!.cursor.highWater).toBe(at(SERVER_NOW));
  });

  it('gives up with SYNC_WINDOW_UNSTABLE after five passes that never agree', async () => {
    const server = new WindowServer(rows('f', 10, T0, 30 * 60_000));
    // A changed count alone is not enough (a pass that sees no unseen key ends the re-reads: in a
    // past window records can only leave). Here every request finds a new record in the window,
    // so every pass sees both a new count and an unseen key: no two reads ever agree.
    server.beforeRequest = (n, s) => {
      s.rows.push(row(`new${n}`, T0 + 60_000));
    };
    const { chunks, error } = await collectUntilError(read(server, 4, { maxWindowMs: HOUR, minWindowMs: HOUR }));
    expect(error).toBeInstanceOf(FreightSyncError);
    expect((error as FreightSyncError).code).toBe('SYNC_WINDOW_UNSTABLE');
    expect((error as Error).message).toContain(`${at(T0)} .. ${at(T0 + HOUR)}`);
    // The stream's checkpoint never moved past the unstable window.
    for (const c of chunks) expect(c.cursor.window?.from ?? c.cursor.highWater).toBe(at(T0));
    // Five passes, each ended by a re-read at offset 0 (plus the window's first page).
    expect(server.requests.filter((r) => r.skip === 0)).toHaveLength(1 + 5);
  });

  it('adapts the span: quiet windows grow it up to maxWindow; consecutive windows share their bound', async () => {
    const server = new WindowServer([]);
    const cursor: WindowCursor = { mode: 'window', highWater: at(T0), spanMs: HOUR, window: null };
    const chunks = await collect(read(server, 10, { maxWindowMs: 4 * HOUR, minWindowMs: HOUR }, cursor));
    // 1h, then ×2 each empty window (fill 0 → factor capped at 2), capped at 4h, last cut at range end.
    expect(server.windows()).toEqual([
      [at(T0), at(T0 + HOUR)],
      [at(T0 + HOUR), at(T0 + 3 * HOUR)],
      [at(T0 + 3 * HOUR), at(T0 + 7 * HOUR)],
      [at(T0 + 7 * HOUR), at(T0 + 8 * HOUR)],
    ]);
    expect(chunks.map((c) => c.cursor.spanMs)).toEqual([2 * HOUR, 4 * HOUR, 4 * HOUR, 4 * HOUR]);
    expect(chunks.at(-1)!.cursor).toEqual({ mode: 'window', highWater: at(SERVER_NOW), spanMs: 4 * HOUR, window: null });
  });

  it('the lookback re-read in short windows never stores a high-water mark behind the previous one', async () => {
    const server = new WindowServer(rows('b', 6, T0 + 4 * HOUR, 2 * HOUR));
    // Read up to T0+6h before; a 3h lookback in 1h windows re-reads T0+3h… first.
    const cursor: WindowCursor = { mode: 'window', highWater: at(T0 + 6 * HOUR), spanMs: HOUR, window: null };
    const chunks = await collect(read(server, 10, { maxWindowMs: HOUR, minWindowMs: HOUR, lookbackMs: 3 * HOUR }, cursor));
    expect(server.windows()[0]).toEqual([at(T0 + 3 * HOUR), at(T0 + 4 * HOUR)]);
    expect(unique(keysOf(chunks))).toEqual(unique(server.rows.map((r) => r.id)));
    const marks = chunks.map((c) => Date.parse(c.cursor.highWater!));
    for (const mark of marks) expect(mark).toBeGreaterThanOrEqual(T0 + 6 * HOUR);
    expect(chunks.at(-1)!.cursor).toMatchObject({ highWater: at(SERVER_NOW), window: null });
  });

  it('delivers a record stamped exactly at a window boundary (inclusive bounds, no 1 ms gap)', async () => {
    const server = new WindowServer([row('edge', T0 + HOUR)]);
    const cursor: WindowCursor = { mode: 'window', highWater: at(T0), spanMs: HOUR, window: null };
    const chunks = await collect(read(server, 10, { maxWindowMs: HOUR, minWindowMs: HOUR }, cursor));
    // Read in both windows that touch T0+1h: the overlap is deduplicated later, never lost.
    expect(keysOf(chunks)).toEqual(['edge', 'edge']);
  });

  it('shrinks the next span after a dense window', async () => {
    // 8 rows in a 4h window with page 10: fill 0.8 > target 0.6 → next span 4h × 0.75 = 3h.
    const server = new WindowServer(rows('g', 8, T0, 4 * HOUR));
    const chunks = await collect(read(server, 10, { maxWindowMs: 4 * HOUR, minWindowMs: HOUR }));
    expect(chunks[0]!.cursor.spanMs).toBe(3 * HOUR);
    expect(server.windows()[1]).toEqual([at(T0 + 4 * HOUR), at(T0 + 7 * HOUR)]);
  });

  it('reads an unpaged endpoint in one request per window, never splitting', async () => {
    const server = new WindowServer(rows('h', 30, T0, 8 * HOUR), false);
    const chunks = await collect(read(server, 4));
    expect(server.requests).toEqual([{ from: at(T0), to: at(SERVER_NOW), skip: 0, limit: null }]);
    expect(keysOf(chunks)).toHaveLength(30);
  });

  it('resumes a window in progress from the cursor', async () => {
    const server = new WindowServer(rows('i', 2, T0 + 2 * HOUR, HOUR));
    const cursor: WindowCursor = { mode: 'window', highWater: at(T0 + HOUR), spanMs: HOUR, window: { from: at(T0 + 2 * HOUR), to: at(T0 + 3 * HOUR), rangeEnd: at(T0 + 3 * HOUR) } };
    const chunks = await collect(read(server, 10, {}, cursor));
    expect(server.windows()).toEqual([[at(T0 + 2 * HOUR), at(T0 + 3 * HOUR)]]);
    expect(chunks.at(-1)!.cursor).toMatchObject({ highWater: at(T0 + 3 * HOUR), window: null });
  });

  describe('a source with `count` on every page (bills, support moves)', () => {
    it('pages a window of a few pages by offset instead of halving it: ceil(count / page) requests', async () => {
      // 10 rows in the first 30 minutes, page of 4: 3 requests (0, 4, 8) for the whole range, where
      // halving re-read the first page of every half.
      const server = new WindowServer(rows('e', 10, T0, 30 * 60_000));
      server.countOnEveryPage = true;
      const chunks = await collect(read(server, 4));
      expect(server.requests.map((r) => [r.from, r.to, r.skip])).toEqual([
        [at(T0), at(SERVER_NOW), 0],
        [at(T0), at(SERVER_NOW), 4],
        [at(T0), at(SERVER_NOW), 8],
      ]);
      expect(keysOf(chunks)).toEqual(server.rows.map((r) => r.id));
      expect(chunks.at(-1)!.cursor).toMatchObject({ highWater: at(SERVER_NOW), window: null });
      // Pages go out with the cursor still on the window: a crash reads it again.
      for (const c of chunks.slice(0, 3)) expect(c.cursor.window).toMatchObject({ from: at(T0), to: at(SERVER_NOW) });
    });

    it('splits the window as before when the count moves while it is paged, losing nothing', async () => {
      const server = new WindowServer(rows('f', 10, T0, 30 * 60_000));
      server.countOnEveryPage = true;
      server.beforeRequest = (n, s) => {
        // After the first page, f00 is updated and leaves the range: f04 slides onto offset 3,
        // already read; the second answer's count (9) says so.
        if (n === 1) s.move('f00', SERVER_NOW + HOUR);
      };
      const chunks = await collect(read(server, 4));
      expect(server.requests.slice(0, 2).map((r) => r.skip)).toEqual([0, 4]);
      expect(server.requests[2]).toMatchObject({ from: at(T0), to: at(T0 + 4 * HOUR), skip: 0 });
      expect(unique(keysOf(chunks))).toEqual(unique(server.rows.map((r) => r.id)));
    });

    it('halves a window of more than four pages', async () => {
      const server = new WindowServer(rows('g', 17, T0, 30 * 60_000));
      server.countOnEveryPage = true;
      await collect(read(server, 4));
      expect(server.requests[1]).toMatchObject({ from: at(T0), to: at(T0 + 4 * HOUR), skip: 0 });
    });
  });
});
