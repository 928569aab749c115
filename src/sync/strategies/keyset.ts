import { z } from 'zod';
import type { Page } from '../../api/paging.js';
import { FreightSyncError } from '../../util/errors.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { iso, toMs } from '../time.js';
import { ensureServerClock, runRange } from '../window-plan.js';

/**
 * Keyset paging on updatedAt (design §2.1) for endpoints that honour `sortBy` ascending on
 * updatedAt: each page starts at the last updatedAt seen (inclusive), so records updated while
 * paging cannot shift unread records onto pages already read. Records sharing the boundary
 * timestamp are skipped by id, with the check below guarding the offset used to skip them.
 */
export const keysetCursorSchema = z.strictObject({
  mode: z.literal('keyset'),
  /** End of the last completed range (ISO): the next range starts here minus the lookback. */
  highWater: z.string().nullable(),
  /** The range in progress, so a killed run resumes exactly where it stopped. */
  window: z
    .strictObject({
      from: z.string(),
      to: z.string(),
      /** updatedAt of the last committed record (inclusive lower bound of the next page). */
      lower: z.string(),
      /** Keys of committed records whose updatedAt equals `lower`. */
      seenAtLower: z.array(z.string()),
    })
    .nullable(),
});
export type KeysetCursor = z.infer<typeof keysetCursorSchema>;

export interface KeysetSource {
  key(record: RawRecord): string;
  updatedAt(record: RawRecord): string | null;
  fetch(args: { from: string; to: string; skip: number; limit: number; signal: AbortSignal }): Promise<Page<RawRecord>>;
}

export class SortOrderError extends FreightSyncError {
  constructor(stream: string, detail: string) {
    super('SYNC_SORT_IGNORED', `stream ${stream}: the server did not return records in ascending updatedAt order (${detail}); refusing to page on a cursor that would lose data`);
  }
}

export async function* readKeyset(
  stream: string,
  source: KeysetSource,
  env: StreamEnv<unknown>,
  cursor: KeysetCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<KeysetCursor>> {
  let state: KeysetCursor = cursor ?? { mode: 'keyset', highWater: null, window: null };
  if (!state.window) {
    await ensureServerClock(env.client, signal);
    const range = runRange(plan, state.highWater, env.client);
    if (range.from >= range.to) return;
    state = { ...state, window: { from: range.from, to: range.to, lower: range.from, seenAtLower: [] } };
  }
  const limit = env.pageSize;
  for (;;) {
    const window = state.window!;
    const seen = new Set(window.seenAtLower);
    const lowerMs = toMs(window.lower)!;
    // Skip the boundary records already delivered, all but one: the one left in must come back
    // first, which proves that none of the skipped positions held an unseen record.
    let skip = Math.max(0, seen.size - 1);
    let pages = 1;
    let page = await source.fetch({ from: window.lower, to: window.to, skip, limit, signal });
    const first = page.items[0];
    if (skip > 0 && (!first || !seen.has(source.key(first)) || toMs(source.updatedAt(first)) !== lowerMs)) {
      // A boundary record left the range since it was read: the offset is no longer safe.
      skip = 0;
      pages += 1;
      page = await source.fetch({ from: window.lower, to: window.to, skip: 0, limit, signal });
    }
    assertAscending(stream, page.items, source);

    const fresh = page.items.filter((r) => !(toMs(source.updatedAt(r)) === lowerMs && seen.has(source.key(r))));
    const received = page.items.length + page.rejected.length;
    const batchId = `${window.from}_${window.to}_${window.lower}_${skip}`;

    let next: KeysetCursor;
    if (received < limit) {
      next = { mode: 'keyset', highWater: window.to, window: null };
    } else {
      const lastMs = lastUpdatedMs(page.items, source) ?? lowerMs;
      const atLast = page.items.filter((r) => toMs(source.updatedAt(r)) === lastMs).map((r) => source.key(r));
      const seenAtLower = lastMs === lowerMs ? [...new Set([...seen, ...atLast])] : [...new Set(atLast)];
      if (lastMs === lowerMs && seenAtLower.length === seen.size && fresh.length === 0) {
        throw new FreightSyncError(
          'SYNC_NO_PROGRESS',
          `stream ${stream}: a full page at updatedAt ${window.lower} brought nothing new; the server's order within equal timestamps is not stable`,
        );
      }
      next = { ...state, window: { ...window, lower: iso(lastMs), seenAtLower } };
    }
    yield { records: fresh, cursor: next, batchId, pages, rejected: page.rejected };
    state = next;
    if (!state.window) return;
  }
}

function lastUpdatedMs(items: RawRecord[], source: KeysetSource): number | null {
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const ms = toMs(source.updatedAt(items[i]!));
    if (ms !== null) return ms;
  }
  return null;
}

function assertAscending(stream: string, items: RawRecord[], source: KeysetSource): void {
  let previous = -Infinity;
  for (const item of items) {
    const ms = toMs(source.updatedAt(item));
    if (ms === null) continue;
    if (ms < previous) throw new SortOrderError(stream, `${iso(ms)} after ${iso(previous)}`);
    previous = ms;
  }
}
