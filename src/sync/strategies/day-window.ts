import { z } from 'zod';
import type { Page } from '../../api/paging.js';
import { FreightSyncError } from '../../util/errors.js';
import { contentHash } from '../content-hash.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { addDays, DAY_MS, dayStartMs, iso, laterMark, toMs, utcDay } from '../time.js';
import { ensureServerClock, keepCover, lagCoverField, runRange } from '../window-plan.js';
import { lastItemPosition } from './keyset.js';

/**
 * Day windows for lists whose updatedAt filter is a DATE (brokerage `updatedFrom/updatedTo`,
 * spec §4.4.3, §4.7, §4.8; design §2.8). The server answers whole UTC days, so a window is one
 * or more whole days (more while days are sparse), read to its end by offset — however many
 * records it holds — in the server's order, which must be stable for records that do not change
 * (loads sort on createdAt; customers are asked for createdAt order).
 *
 * Offsets are checked, not re-read: consecutive pages overlap by one record, and a page is
 * trusted only when it starts the window or holds a record already delivered from it, unchanged
 * (a landmark). While a window is read, records can enter it (an older record updated onto
 * today, a new one), which pushes later records forward — harmless, they are read twice — or
 * leave it (a record of a past day updated onto today), which pulls later records back onto
 * offsets already read. Then the page at the next offset holds no landmark; the pager looks one
 * page back and carries on from there, so a departure costs one request, not a re-read of the
 * day (the whole window is read again only when not one landmark can be found). Records changed
 * while the window is read — the only ones whose position may move — carry an updatedAt after
 * the range end, so the next pass reads them: its range starts at this one's end minus the
 * lookback, which puts that day in it again.
 *
 * Cost: Σ ceil(records / (pageSize − 1)) per window, plus one request per departure noticed. The
 * current day is read whole once per pass: the filters cannot narrow it to the last minutes.
 * Records already delivered with the same content are dropped by the content-hash store, so
 * reading a day again re-delivers nothing.
 */

const daySchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day YYYY-MM-DD');

const anchorSchema = z.strictObject({ key: z.string(), hash: z.string() });

export const dayCursorSchema = z.strictObject({
  mode: z.literal('days'),
  /** End of the last completed range (ISO instant): the next range starts here minus the lookback. */
  highWater: z.string().nullable(),
  /** The checkpoint was reached with the safety lag's cover (window-plan.ts, runRange). */
  lagCover: lagCoverField,
  /** Adaptive window length in days. */
  spanDays: z.number().int().positive().nullable(),
  /** The window being read, so a killed run resumes inside a day. */
  window: z
    .strictObject({
      /** First and last UTC day of the window (inclusive). */
      from: daySchema,
      to: daySchema,
      /** End of the whole range this run covers (ISO instant). */
      rangeEnd: z.string(),
      /** Offset of the next page. */
      skip: z.number().int().nonnegative(),
      /** The last record delivered, expected (unchanged) at `skip`; null at the window's start. */
      anchor: anchorSchema.nullable(),
    })
    .nullable(),
});
export type DayCursor = z.infer<typeof dayCursorSchema>;

export interface DaySource {
  key(record: RawRecord): string;
  /** One page of the records whose updatedAt falls on the UTC days fromDay..toDay (inclusive). */
  fetch(args: { fromDay: string; toDay: string; skip: number; limit: number; signal: AbortSignal }): Promise<Page<RawRecord>>;
}

/** Pages a window aims at: fewer, larger windows waste fewer short last pages. */
const TARGET_PAGES = 4;
/** Times one window starts over because no record already delivered could be found again. */
const MAX_RESTARTS = 3;
/** Pages re-read one page back, beyond one in four pages read: more means an unstable order. */
const RELOCATIONS_FREE = 8;
/** Pages in a row answered with the same records at a new offset before the reader gives up. */
const MAX_STALLS = 8;

/**
 * The day cursor of a stored cursor: itself, or — for the closed-window cursor brokerage streams
 * kept before day windows — a fresh range from where that one stood (earliest position known).
 */
export function asDayCursor(cursor: unknown): DayCursor | undefined {
  if (!cursor || typeof cursor !== 'object') return undefined;
  const c = cursor as { mode?: unknown; highWater?: unknown; window?: { from?: unknown } | null };
  if (c.mode === 'days') return cursor as DayCursor;
  if (c.mode !== 'window') return undefined;
  const at = typeof c.window?.from === 'string' ? c.window.from : typeof c.highWater === 'string' ? c.highWater : null;
  return dayCursorAt(at);
}

/** The cursor that starts the next range at `at` (minus the lookback). */
export function dayCursorAt(at: string | null): DayCursor {
  return { mode: 'days', highWater: at, spanDays: null, window: null };
}

export async function* readDayWindows(
  stream: string,
  source: DaySource,
  env: StreamEnv<unknown>,
  cursor: DayCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<DayCursor>> {
  let state: DayCursor = cursor ?? { mode: 'days', highWater: null, spanDays: null, window: null };
  const maxDays = Math.max(1, Math.floor(plan.maxWindowMs / DAY_MS));
  if (!state.window) {
    await ensureServerClock(env.client, signal);
    const range = runRange(plan, state, env.client);
    if (range.from >= range.to) return;
    const span = clamp(state.spanDays ?? maxDays, 1, maxDays);
    // The range's cover is recorded as it opens; it is read only when the next range opens.
    state = { mode: 'days', highWater: state.highWater, ...keepCover(range), spanDays: span, window: firstWindow(utcDay(toMs(range.from)!), span, range.to) };
  }
  // Overlapping pages need room for the anchor and at least one record more.
  const limit = Math.max(2, env.pageSize);

  for (;;) {
    const window = state.window!;
    const pager = new TrustedPager(stream, source, window, limit, signal);
    let skip = window.skip;
    for (;;) {
      const { page, hashes, pages, skip: at } = await pager.read(skip);
      const batchId = `${window.from}_${window.to}_s${at}`;
      if (!isFull(page, limit)) {
        state = afterWindow(state, window, at + page.items.length + page.rejected.length, limit, maxDays);
        yield { records: page.items, cursor: state, batchId, pages, rejected: page.rejected };
        break;
      }
      // The next page starts AT this page's last record (the anchor), or after the page when
      // it holds no usable record.
      const lastPosition = lastItemPosition(page);
      const anchor = page.items.length > 0 && lastPosition > 0 ? { key: source.key(page.items.at(-1)!), hash: hashes.at(-1)! } : null;
      const inside = { ...window, skip: at + (anchor ? lastPosition : page.items.length + page.rejected.length), anchor };
      yield { records: page.items, cursor: { ...state, window: inside }, batchId, pages, rejected: page.rejected };
      skip = inside.skip;
    }
    if (!state.window) return;
  }
}

/** A page as read: where it starts, the content hash of each item, and the requests it took. */
interface Fetched {
  skip: number;
  page: Page<RawRecord>;
  hashes: string[];
  pages: number;
}

/**
 * Reads the pages of one window and answers only trusted ones (see the top of this file): a page
 * without a landmark is replaced by the one a page back, and that, if it has none either, by the
 * window's first page. Gives up (SYNC_WINDOW_UNSTABLE) when that keeps happening or when every
 * offset brings the same page (a server ignoring skip) rather than loop.
 */
class TrustedPager {
  /** Content hash by key of every record delivered from the window (only the anchor after a resume). */
  private readonly landmarks = new Map<string, string>();
  private relocations = 0;
  private restarts = 0;
  private stalls = 0;
  private pagesRead = 0;
  private previous: { skip: number; keys: string } | undefined;

  constructor(
    private readonly stream: string,
    private readonly source: DaySource,
    private readonly window: NonNullable<DayCursor['window']>,
    private readonly limit: number,
    private readonly signal: AbortSignal,
  ) {
    if (window.anchor) this.landmarks.set(window.anchor.key, window.anchor.hash);
  }

  async read(skip: number): Promise<Fetched> {
    let at = await this.fetch(skip);
    if (!this.trusted(at)) {
      // Records before the offset left the window (or many entered it): look one page back.
      this.relocations += 1;
      if (this.relocations > RELOCATIONS_FREE + this.pagesRead / 4) throw this.unstable('the records around the read position kept moving');
      at = await this.fetch(Math.max(0, skip - (this.limit - 1)), at.pages);
      if (!this.trusted(at)) {
        this.restarts += 1;
        if (this.restarts > MAX_RESTARTS) throw this.unstable(`no record already read could be found again, ${this.restarts} times`);
        at = await this.fetch(0, at.pages);
      }
    }
    this.pagesRead += at.pages;
    this.checkSkipHonoured(at);
    at.page.items.forEach((r, i) => this.landmarks.set(this.source.key(r), at.hashes[i]!));
    return at;
  }

  private async fetch(skip: number, pagesBefore = 0): Promise<Fetched> {
    const page = await this.source.fetch({ fromDay: this.window.from, toDay: this.window.to, skip, limit: this.limit, signal: this.signal });
    return { skip, page, hashes: page.items.map((r) => contentHash('', r)), pages: pagesBefore + 1 };
  }

  private trusted(at: Fetched): boolean {
    return at.skip === 0 || at.page.items.some((r, i) => this.landmarks.get(this.source.key(r)) === at.hashes[i]);
  }

  /** A server ignoring skip answers every offset alike (an order that changes on every request cannot be told from data). */
  private checkSkipHonoured(at: Fetched): void {
    const keys = at.page.items.map((r) => this.source.key(r)).join('\u0000');
    if (isFull(at.page, this.limit) && this.previous !== undefined && at.skip !== this.previous.skip && keys === this.previous.keys) {
      this.stalls += 1;
      if (this.stalls >= MAX_STALLS) throw this.unstable(`the same ${this.limit} records came back at ${this.stalls + 1} offsets: is skip honoured?`);
    } else this.stalls = 0;
    this.previous = { skip: at.skip, keys };
  }

  private unstable(detail: string): FreightSyncError {
    return new FreightSyncError(
      'SYNC_WINDOW_UNSTABLE',
      `stream ${this.stream}: day window ${this.window.from} .. ${this.window.to} kept shifting while it was read (${detail}); it will be read again on the next run`,
    );
  }
}

function isFull(page: Page<RawRecord>, limit: number): boolean {
  return page.items.length + page.rejected.length >= limit;
}

function firstWindow(fromDay: string, span: number, rangeEnd: string): NonNullable<DayCursor['window']> {
  const lastDay = utcDay(toMs(rangeEnd)!);
  const to = addDays(fromDay, span - 1);
  return { from: fromDay, to: to < lastDay ? to : lastDay, rangeEnd, skip: 0, anchor: null };
}

/** The cursor once a window is read to its end: the next window (length adapted), or the range done. */
function afterWindow(state: DayCursor, window: NonNullable<DayCursor['window']>, records: number, limit: number, maxDays: number): DayCursor {
  const span = state.spanDays ?? 1;
  const factor = clamp((limit * TARGET_PAGES) / Math.max(records, 1), 0.5, 2);
  const spanDays = clamp(Math.round(span * factor), 1, maxDays);
  if (window.to >= utcDay(toMs(window.rangeEnd)!)) return { mode: 'days', highWater: laterMark(state.highWater, window.rangeEnd), ...keepCover(state), spanDays, window: null };
  const from = addDays(window.to, 1);
  // Every record last updated before `from` has been read (or moved on to a later day).
  return { mode: 'days', highWater: laterMark(state.highWater, iso(dayStartMs(from))), ...keepCover(state), spanDays, window: firstWindow(from, spanDays, window.rangeEnd) };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
