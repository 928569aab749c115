import { z } from 'zod';
import type { ListPeek, ListPeekHandler } from '../../api/list-peek.js';
import type { Page } from '../../api/paging.js';
import { FreightSyncError } from '../../util/errors.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { PageSpeculation } from '../page-speculation.js';
import { iso, toMs } from '../time.js';
import { ensureServerClock, keepCover, lagCoverField, runRange } from '../window-plan.js';

/**
 * Keyset paging on updatedAt (design §2.1) for endpoints that honour `sortBy` ascending on
 * updatedAt: each page starts at the last updatedAt seen (inclusive), so records updated while
 * paging cannot shift unread records onto pages already read. Records sharing the boundary
 * timestamp are skipped by offset, with the check below guarding that offset; when a boundary
 * record has left (it was updated), the boundary is read again from its start and only the
 * delivered records still there are counted, so the offset never overshoots an unread record.
 */
export const keysetCursorSchema = z.strictObject({
  mode: z.literal('keyset'),
  /** End of the last completed range (ISO): the next range starts here minus the lookback. */
  highWater: z.string().nullable(),
  /** The checkpoint was reached with the safety lag's cover (window-plan.ts, runRange). */
  lagCover: lagCoverField,
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
  /** `peek` (when given) is shown the answer's elements before they are parsed: see page-speculation.ts. */
  fetch(args: { from: string; to: string; skip: number; limit: number; signal: AbortSignal; peek?: ListPeekHandler }): Promise<Page<RawRecord>>;
}

type KeysetRequest = { from: string; to: string; skip: number; limit: number };

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
    const range = runRange(plan, state, env.client);
    if (range.from >= range.to) return;
    // The range's cover is recorded as it opens; it is read only when the next range opens.
    state = { mode: 'keyset', highWater: state.highWater, ...keepCover(range), window: { from: range.from, to: range.to, lower: range.from, seenAtLower: [] } };
  }
  const limit = env.pageSize;
  // The next page is asked for as soon as this one's bytes show where it ends (guessNextRequest).
  const speculation = new PageSpeculation<KeysetRequest, Page<RawRecord>>(
    (request, requestSignal, peek) => source.fetch({ ...request, signal: requestSignal, peek }),
    (request, peek) => guessNextRequest(request, peek, source),
    signal,
    // One page ahead: two cost more than they gained on loopback (the server's work competes
    // for the same cores) and hold another page in memory.
    1,
    // Only while the engine waits for this reader: ahead of a busy sink it gains nothing.
    () => env.demand?.waiting ?? true,
    // Ahead of a busy sink, an answer waits as bytes until the engine wants it (read-ahead.ts).
    env.demand ? (requestSignal) => env.demand!.whenWaiting(requestSignal) : undefined,
  );
  try {
    yield* readRanges();
  } finally {
    speculation.close();
    const { used, wasted } = speculation.stats();
    if (used + wasted > 0) env.logger.debug({ stream, used, wasted }, 'keyset pages asked for ahead');
  }

  async function* readRanges(): AsyncGenerator<Chunk<KeysetCursor>> {
    // Keys found to have left the boundary in this run (see below); they are no longer counted in
    // the offset, but a record that shows up under one of them at `lower` again is not new.
    let left = { lower: '', keys: new Set<string>() };
    for (;;) {
      const window = state.window!;
      const seen = new Set(window.seenAtLower);
      const lowerMs = toMs(window.lower)!;
      if (left.lower !== window.lower) left = { lower: window.lower, keys: new Set() };
      const atLower = (r: RawRecord) => toMs(source.updatedAt(r)) === lowerMs;
      const delivered = (r: RawRecord) => atLower(r) && seen.has(source.key(r));
      const startsDelivered = (p: Page<RawRecord>) => p.items[0] !== undefined && delivered(p.items[0]);
      const fetchAt = (skip: number) => speculation.fetch({ from: window.lower, to: window.to, skip, limit });

      // The records at `lower` keep the server's (stable) order and can only leave it (an update
      // moves updatedAt forward), so the delivered ones are always the first of them. Skip them, all
      // but one: the one left in must come back first, which proves (delivered ones being first)
      // that none of the skipped positions held an unseen record.
      let skip = Math.max(0, seen.size - 1);
      let pages = 1;
      let page = await fetchAt(skip);
      if (skip > 0 && !startsDelivered(page)) {
        // A boundary record left the range since it was read: the offset is no longer safe.
        skip = 0;
        pages += 1;
        page = await fetchAt(skip);
      }
      assertAscending(stream, page.items, source);

      // Read from the start of the boundary, a full page of delivered records does not say where
      // the delivered ones end (some of those skipped before may have left): follow the boundary
      // from the page's last record, as the offset does, collecting the delivered records still
      // there, until a page brings something else. Each page must bring a delivered record not met
      // before, so this ends within `seenAtLower`.
      const fromStart = skip === 0;
      const stillThere = new Set<string>();
      let restarts = 0;
      while (fromStart && isFull(page, limit) && page.items.every(delivered)) {
        const before = stillThere.size;
        for (const r of page.items) stillThere.add(source.key(r));
        if (stillThere.size === before) throw noProgress(stream, window.lower);
        skip += lastItemPosition(page);
        pages += 1;
        page = await fetchAt(skip);
        if (!startsDelivered(page)) {
          // Another boundary record left meanwhile (or the order is not stable): start over.
          restarts += 1;
          if (restarts > MAX_RESTARTS) throw noProgress(stream, window.lower);
          skip = 0;
          stillThere.clear();
          pages += 1;
          page = await fetchAt(skip);
        }
        assertAscending(stream, page.items, source);
      }

      const fresh = page.items.filter((r) => !(atLower(r) && (seen.has(source.key(r)) || left.keys.has(source.key(r)))));
      const batchId = `${window.from}_${window.to}_${window.lower}_${skip}`;

      let next: KeysetCursor;
      if (!isFull(page, limit)) {
        next = { mode: 'keyset', highWater: window.to, ...keepCover(state), window: null };
      } else {
        const lastMs = lastUpdatedMs(page.items, source) ?? lowerMs;
        const atLast = page.items.filter((r) => toMs(source.updatedAt(r)) === lastMs).map((r) => source.key(r));
        let seenAtLower: string[];
        if (lastMs !== lowerMs) {
          seenAtLower = [...new Set(atLast)];
        } else {
          // A full page at the boundary must bring a record not delivered before, or the next
          // request would be this one again.
          if (fresh.length === 0) throw noProgress(stream, window.lower);
          if (fromStart) {
            // The pages read from the start reached past the delivered records: those not met
            // there have left (they come back with their new updatedAt) and must not be counted
            // in the offset, which would overshoot by them.
            const counted = new Set([...stillThere, ...atLast]);
            for (const key of seen) if (!counted.has(key)) left.keys.add(key);
            seenAtLower = [...counted];
          } else {
            // The page started with a delivered record, so `seen` are exactly the records before it.
            seenAtLower = [...new Set([...seen, ...atLast])];
          }
        }
        next = { ...state, window: { ...window, lower: iso(lastMs), seenAtLower } };
      }
      yield { records: fresh, cursor: next, batchId, pages: pages + speculation.takeWasted(), rejected: page.rejected, recordsReleasable: true };
      // Handed over: the page's records are let go of here, not when a stale reference this
      // suspended generator keeps to the page is overwritten by the next one, after its parse
      // (sync/read-ahead.ts, ConsumerDemand). The chunk keeps its own array of them.
      page.items.length = 0;
      state = next;
      if (!state.window) return;
    }
  }
}

/** Elements sharing the last updatedAt that a guess reads at most (each is parsed once more). */
const GUESS_MAX_AT_LAST = 8;

/**
 * The request readKeyset makes after a full page whose last updatedAt is past the page's lower
 * bound (the common case): from that updatedAt, skipping all but one of the records at it. Read
 * from the page's last elements, unvalidated; PageSpeculation uses the answer only if the request
 * computed from the validated page is the same. Other cases (a short page ends the range; a page
 * at its lower bound follows the boundary rules) are not guessed.
 */
export function guessNextRequest(request: KeysetRequest, peek: ListPeek, source: Pick<KeysetSource, 'key' | 'updatedAt'>): KeysetRequest | undefined {
  if (peek.count < request.limit) return undefined;
  let lastMs: number | null = null;
  const atLast = new Set<string>();
  for (let i = peek.count - 1; i >= 0 && peek.count - i <= GUESS_MAX_AT_LAST + 1; i--) {
    const element = peek.element(i);
    if (element === null || typeof element !== 'object' || Array.isArray(element)) return undefined;
    const ms = toMs(source.updatedAt(element as RawRecord));
    if (ms === null) return undefined;
    if (lastMs !== null && ms !== lastMs) {
      if (lastMs === toMs(request.from)) return undefined;
      return { from: iso(lastMs), to: request.to, skip: Math.max(0, atLast.size - 1), limit: request.limit };
    }
    lastMs = ms;
    atLast.add(source.key(element as RawRecord));
  }
  return undefined;
}

/** Times one step starts over from the boundary because a record left it while it was followed. */
const MAX_RESTARTS = 3;

function isFull(page: Page<RawRecord>, limit: number): boolean {
  return page.items.length + page.rejected.length >= limit;
}

/** Offset of the page's last valid record within the page (rejected elements hold positions too). */
export function lastItemPosition(page: Page<RawRecord>): number {
  const rejected = new Set(page.rejected.map((r) => r.index));
  let position = page.items.length + page.rejected.length - 1;
  while (position > 0 && rejected.has(position)) position -= 1;
  return position;
}

function noProgress(stream: string, lower: string): FreightSyncError {
  return new FreightSyncError(
    'SYNC_NO_PROGRESS',
    `stream ${stream}: a full page at updatedAt ${lower} brought nothing new; the server's order within equal timestamps is not stable, or more records share that instant than a page can move past`,
  );
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
