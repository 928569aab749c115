import { describe, expect, it } from 'vitest';
import type { Page } from '../../src/api/paging.js';
import { readClosedWindows, type WindowCursor, type WindowSource } from '../../src/sync/strategies/closed-window.js';
import type { RawRecord, RunPlan, StreamEnv } from '../../src/sync/stream-definition.js';

/**
 * Append-only windows (the webhook event log): a window that does not fit in a page is paged by
 * offset — never split (a split re-reads what its first request read) and never re-read for
 * stability (nothing can leave a closed window of createdAt) — and a stopped pass resumes at the
 * offset its last committed page reached.
 */
const PLAN: RunPlan = { mode: 'incremental', lookbackMs: 0, safetyLagMs: 0, initialFrom: '2026-01-01T00:00:00.000Z', maxWindowMs: 7 * 86_400_000, minWindowMs: 60_000 };
const ENV = { pageSize: 50 } as StreamEnv<unknown>;

/** `n` records, all at one instant: a burst no window split could ever separate. */
function source(n: number, calls: { skip: number; limit: number | null }[]): WindowSource {
  const records: RawRecord[] = Array.from({ length: n }, (_, i) => ({ _id: i + 1, createdAt: '2026-01-01T00:05:00.000Z' }));
  return {
    key: (r) => String(r._id),
    paged: true,
    appendOnly: true,
    fetch: async ({ skip, limit }): Promise<Page<RawRecord>> => {
      calls.push({ skip, limit });
      const items = records.slice(skip, skip + limit!);
      return { items, rejected: [], skip, envelope: { data: items } as Page<RawRecord>['envelope'] };
    },
  };
}

function windowAt(skip?: number): WindowCursor {
  return {
    mode: 'window',
    highWater: '2026-01-01T00:00:00.000Z',
    spanMs: 60_000,
    window: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T00:10:00.000Z', rangeEnd: '2026-01-01T00:10:00.000Z', ...(skip === undefined ? {} : { skip }) },
  };
}

async function drain(src: WindowSource, cursor: WindowCursor) {
  const ids: unknown[] = [];
  let last: WindowCursor | undefined;
  for await (const chunk of readClosedWindows('webhookEvents', src, ENV, cursor, PLAN, new AbortController().signal)) {
    ids.push(...chunk.records.map((r) => r._id));
    last = chunk.cursor;
  }
  return { ids, last };
}

describe('closed windows of an append-only source', () => {
  it('pages a dense window by offset: ceil((n + 1) / page) requests, each record once', async () => {
    const calls: { skip: number; limit: number | null }[] = [];
    const { ids, last } = await drain(source(120, calls), windowAt());
    expect(calls.map((c) => c.skip)).toEqual([0, 50, 100]);
    expect(ids).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(last).toMatchObject({ highWater: '2026-01-01T00:10:00.000Z', window: null, spanMs: PLAN.maxWindowMs });
  });

  it('commits the offset with each page and resumes there', async () => {
    const calls: { skip: number; limit: number | null }[] = [];
    const chunks = readClosedWindows('webhookEvents', source(120, calls), ENV, windowAt(), PLAN, new AbortController().signal);
    const first = await chunks.next();
    expect(first.done).toBe(false);
    expect(first.value && first.value.cursor.window).toMatchObject({ skip: 50 });

    const resumedCalls: { skip: number; limit: number | null }[] = [];
    const { ids } = await drain(source(120, resumedCalls), windowAt(50));
    expect(resumedCalls.map((c) => c.skip)).toEqual([50, 100]);
    expect(ids).toEqual(Array.from({ length: 70 }, (_, i) => i + 51));
  });
});
