import { z } from 'zod';
import type { Page } from '../../api/paging.js';
import { FreightSyncError } from '../../util/errors.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { iso, laterMark, toMs } from '../time.js';
import { keepCover, lagCoverField, openFirstWindow } from '../window-plan.js';

/**
 * Closed windows for endpoints without an updatedAt sort whose filters take a time (bills,
 * support moves, webhook events, invoice billing dates; design §2.1; brokerage's date-only
 * updatedAt filters need day windows instead, day-window.ts). A window whose records fit in one
 * page is read in one request — one consistent answer, nothing can move. A window that does not
 * fit is split in half until it does (down to `minWindow`); the page read before the split is delivered anyway,
 * so no request is wasted on data. A window that still does not fit at the minimum size (a burst
 * of equal timestamps) is paged by offset and re-read until two reads agree (same `count`, no
 * unseen keys). Window sizes adapt: a quiet period grows them (no thousands of empty requests),
 * a burst shrinks them.
 */
export const windowCursorSchema = z.strictObject({
  mode: z.literal('window'),
  highWater: z.string().nullable(),
  /** The checkpoint was reached with the safety lag's cover (window-plan.ts, runRange). */
  lagCover: lagCoverField,
  /** Current adaptive window length. */
  spanMs: z.number().positive().nullable(),
  window: z
    .strictObject({
      from: z.string(),
      to: z.string(),
      /** End of the whole range this run covers. */
      rangeEnd: z.string(),
      /** Append-only sources: records of this window already read by offset (a resumed run continues there). */
      skip: z.number().int().nonnegative().optional(),
    })
    .nullable(),
});
export type WindowCursor = z.infer<typeof windowCursorSchema>;

export interface WindowSource {
  key(record: RawRecord): string;
  /** `limit: null` for endpoints without paging parameters (one answer holds the whole window). */
  fetch(args: { from: string; to: string; skip: number; limit: number | null; signal: AbortSignal }): Promise<Page<RawRecord>>;
  /** False for endpoints without skip/limit. */
  paged: boolean;
  /**
   * True when the window's field is stamped once, when the record is created, and never changes
   * (an event log by createdAt): a closed window's content is then fixed, so offsets within it are
   * stable. Such a window is paged by offset instead of split — no page read twice, no stability
   * re-read — and windows stay at the longest span, so a pass costs the pages of its records.
   */
  appendOnly?: boolean;
  /**
   * True when every page answer carries the window's `count` (bills, support moves): a window
   * that holds a few pages' worth is then paged by offset, each answer's count checked against
   * the first, instead of halved (see `pageByCount`).
   */
  countOnEveryPage?: boolean;
}

const TARGET_FILL = 0.6;
const MAX_STABILITY_PASSES = 5;
/** Largest window, in pages, that `pageByCount` reads by offset rather than halving it. */
const MAX_COUNTED_PAGES = 4;

export async function* readClosedWindows(
  stream: string,
  source: WindowSource,
  env: StreamEnv<unknown>,
  cursor: WindowCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<WindowCursor>> {
  let state: WindowCursor = cursor ?? { mode: 'window', highWater: null, spanMs: null, window: null };
  const minSpan = Math.max(1, plan.minWindowMs);
  const maxSpan = Math.max(minSpan, plan.maxWindowMs);
  const limit = source.paged ? env.pageSize : null;
  if (source.appendOnly && limit !== null) {
    yield* readAppendOnlyWindows(source, env, { ...state, spanMs: maxSpan }, plan, limit, signal);
    return;
  }
  const opened = await openFirstWindow(state, plan, env.client, signal);
  if (!opened) return;
  state = opened;

  for (;;) {
    const window = state.window!;
    const fromMs = toMs(window.from)!;
    const toMsValue = toMs(window.to)!;
    const span = state.spanMs ?? maxSpan;
    const first = await source.fetch({ from: window.from, to: window.to, skip: 0, limit, signal });
    const received = first.items.length + first.rejected.length;
    const more = limit !== null && (first.count !== undefined ? first.count > received : received >= limit);

    if (more && source.countOnEveryPage && first.count !== undefined && first.count <= limit! * MAX_COUNTED_PAGES) {
      // A few pages' worth: page it by offset while the count holds (the first page is its first).
      const held = yield* pageByCount(source, { window, first, limit: limit!, state }, signal);
      if (held) {
        const nextSpan = clamp(Math.round(span * clamp((limit! * TARGET_FILL) / Math.max(first.count, 1), 0.5, 2)), minSpan, maxSpan);
        const next = afterWindow(state, window, nextSpan);
        yield { records: [], cursor: next, batchId: `${window.from}_${window.to}_counted`, pages: 0, rejected: [] };
        state = next;
        if (!state.window) return;
        continue;
      }
      // The count moved while paging: a record left (or arrived late); split as below, the
      // pages read are delivered already (deduplicated by content hash).
    }

    if (more && toMsValue - fromMs > minSpan) {
      // Too dense: halve the window; deliver what was read (deduplicated later).
      const half = Math.max(minSpan, Math.floor((toMsValue - fromMs) / 2));
      const next: WindowCursor = { ...state, spanMs: clamp(half, minSpan, maxSpan), window: { ...window, to: iso(fromMs + half) } };
      yield { records: first.items, cursor: next, batchId: `${window.from}_${window.to}_split`, pages: 1, rejected: first.rejected };
      state = next;
      continue;
    }

    let total = first.count ?? received;
    if (more) {
      // At the minimum window and still more than a page: page it and re-read until stable.
      yield* pageUntilStable(stream, source, window, first, limit!, state, signal);
      total = first.count ?? total;
    }

    const nextSpan = clamp(Math.round(span * clamp((limit ?? Infinity) * TARGET_FILL / Math.max(total, 1), 0.5, 2)), minSpan, maxSpan);
    const next = afterWindow(state, window, nextSpan);
    yield { records: more ? [] : first.items, cursor: next, batchId: `${window.from}_${window.to}`, pages: 1, rejected: more ? [] : first.rejected };
    state = next;
    if (!state.window) return;
  }
}

/** The cursor once `window` is fully read: the next window of `span`, or the range done. */
function afterWindow(state: WindowCursor, window: NonNullable<WindowCursor['window']>, span: number): WindowCursor {
  const previousHighWater = state.highWater;
  if (toMs(window.to)! >= toMs(window.rangeEnd)!) return { mode: 'window', highWater: laterMark(previousHighWater, window.rangeEnd), ...keepCover(state), spanMs: span, window: null };
  return {
    mode: 'window',
    highWater: laterMark(previousHighWater, window.to),
    ...keepCover(state),
    spanMs: span,
    // The next window starts AT this one's end: bounds are inclusive and timestamps may
    // carry more precision than milliseconds, so a gap of even 1 ms could lose records.
    window: { from: window.to, to: endOf(window.to, span, window.rangeEnd), rangeEnd: window.rangeEnd },
  };
}

/**
 * Windows of an append-only source (see WindowSource.appendOnly), each paged by offset from the
 * cursor's `skip`: every page is committed with the offset after it, so a stopped run resumes at
 * the next page. An incremental pass is one window of the longest span (`maxWindow`), so it costs
 * ceil((records + 1) / pageSize) requests — the last, short page says the window is done.
 */
async function* readAppendOnlyWindows(
  source: WindowSource,
  env: StreamEnv<unknown>,
  cursor: WindowCursor,
  plan: RunPlan,
  limit: number,
  signal: AbortSignal,
): AsyncGenerator<Chunk<WindowCursor>> {
  const span = cursor.spanMs!;
  const opened = await openFirstWindow(cursor, plan, env.client, signal);
  if (!opened) return;
  let state = opened;
  while (state.window) {
    const window = state.window;
    const skip = window.skip ?? 0;
    const page = await source.fetch({ from: window.from, to: window.to, skip, limit, signal });
    const received = page.items.length + page.rejected.length;
    const read = skip + received;
    const last = received < limit || (page.count !== undefined && read >= page.count);
    const next: WindowCursor = last ? afterWindow(state, window, span) : { ...state, window: { ...window, skip: read } };
    yield { records: page.items, cursor: next, batchId: `${window.from}_${window.to}_s${skip}`, pages: 1, rejected: page.rejected };
    state = next;
  }
}

/**
 * Offset paging of a closed window whose every answer carries its `count`: the window is in the
 * past, so its records can only leave it (an update moves updatedAt past its end) or, late
 * visible, arrive — either changes the count, and a departure is the only way a record slides
 * onto an offset already read. So when every page's count equals the first's, no record moved
 * while it was paged and the pages hold the window whole: the same test `pageUntilStable`
 * applies at the minimum window (the count unchanged between its first page and its re-read),
 * without the re-read — the last page's count is read after every earlier page. Costs
 * ceil(count / limit) requests, where halving cost the first request again plus a request per
 * half (issue 14: bills 4 requests where 2 do, at 20,000 loads). Returns false, having
 * delivered the pages read, when a count differed: the caller then splits the window.
 */
async function* pageByCount(
  source: WindowSource,
  { window, first, limit, state }: { window: NonNullable<WindowCursor['window']>; first: Page<RawRecord>; limit: number; state: WindowCursor },
  signal: AbortSignal,
): AsyncGenerator<Chunk<WindowCursor>, boolean> {
  const count = first.count!;
  let page = first;
  let skip = 0;
  for (;;) {
    // The cursor stays on the window until it is done: a crash reads it again.
    yield { records: page.items, cursor: state, batchId: `${window.from}_${window.to}_c${skip}`, pages: 1, rejected: page.rejected };
    if (page.count !== count) return false;
    const received = page.items.length + page.rejected.length;
    skip += received;
    if (received < limit || skip >= count) return true;
    page = await source.fetch({ from: window.from, to: window.to, skip, limit, signal });
  }
}

/**
 * Offset paging of one window with a stability check: the window is in the past, so records can
 * only leave it (an update moves them out); a departure shifts later records to offsets already
 * read. Re-reading until a pass sees the same count and no unseen key catches every one of them.
 * Pages are delivered as they come, with the cursor still on this window (a crash re-reads it).
 */
async function* pageUntilStable(
  stream: string,
  source: WindowSource,
  window: NonNullable<WindowCursor['window']>,
  first: Page<RawRecord>,
  limit: number,
  state: WindowCursor,
  signal: AbortSignal,
): AsyncGenerator<Chunk<WindowCursor>> {
  const seen = new Set<string>();
  let page = first;
  for (let pass = 1; pass <= MAX_STABILITY_PASSES; pass += 1) {
    const countAtStart = page.count;
    let unseen = 0;
    let skip = 0;
    for (;;) {
      for (const record of page.items) {
        const key = source.key(record);
        if (!seen.has(key)) {
          seen.add(key);
          unseen += 1;
        }
      }
      yield { records: page.items, cursor: state, batchId: `${window.from}_${window.to}_p${pass}_s${skip}`, pages: 1, rejected: page.rejected };
      const received = page.items.length + page.rejected.length;
      skip += received;
      if (received < limit || (page.count !== undefined && skip >= page.count)) break;
      page = await source.fetch({ from: window.from, to: window.to, skip, limit, signal });
    }
    const recheck = await source.fetch({ from: window.from, to: window.to, skip: 0, limit, signal });
    const countStable = countAtStart === undefined || recheck.count === countAtStart;
    const nothingNew = pass > 1 && unseen === 0;
    if ((countStable && countAtStart !== undefined) || nothingNew) return;
    page = recheck;
  }
  throw new FreightSyncError(
    'SYNC_WINDOW_UNSTABLE',
    `stream ${stream}: window ${window.from} .. ${window.to} kept changing over ${MAX_STABILITY_PASSES} reads; it will be read again on the next run`,
  );
}

function endOf(fromIso: string, span: number, rangeEndIso: string): string {
  return iso(Math.min(toMs(fromIso)! + span, toMs(rangeEndIso)!));
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
