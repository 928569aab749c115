import { z } from 'zod';
import type { ListPeekHandler } from '../../api/list-peek.js';
import type { Page } from '../../api/paging.js';
import type { ApiVariant } from '../../api/variant.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { stringField } from '../streams/common.js';
import { windowCursorSchema, type WindowCursor } from './closed-window.js';
import { asDayCursor, dayCursorAt, dayCursorSchema, readDayWindows, type DayCursor } from './day-window.js';
import { keysetCursorSchema, readKeyset, type KeysetCursor } from './keyset.js';

/** Keyset on main, day windows on brokerage; `window` is what brokerage stored before day windows (read once, then replaced). */
export const updatedFeedCursorSchema = z.union([keysetCursorSchema, dayCursorSchema, windowCursorSchema]);
export type UpdatedFeedCursor = KeysetCursor | DayCursor | WindowCursor;

/** Where an updatedAt feed starts reading at `at` (a stream's reset, a feed's first pass). */
export function updatedFeedCursorAt(variant: ApiVariant, at: string | null): UpdatedFeedCursor {
  return variant === 'main' ? { mode: 'keyset', highWater: at, window: null } : dayCursorAt(at);
}

export interface UpdatedFeedSource {
  key(record: RawRecord): string;
  /** Main: records with updatedAt in [from, to] (datetimes), sorted by updatedAt ascending. */
  fetchMain(args: { from: string; to: string; skip: number; limit: number; signal: AbortSignal; peek?: ListPeekHandler }): Promise<Page<RawRecord>>;
  /** Brokerage: records updated on the UTC days fromDay..toDay (the filters are dates), in the server's stable order. */
  fetchBrokerage(args: { fromDay: string; toDay: string; skip: number; limit: number; signal: AbortSignal }): Promise<Page<RawRecord>>;
}

/**
 * Records changed since the cursor, by updatedAt, for the lists that filter on it (loads,
 * customers, consignees). Main honours `sortBy` on updatedAt with datetime filters: keyset
 * paging (keyset.ts). Brokerage has only `updatedFrom/updatedTo` DATES (§4.4.3, §4.7, §4.8): day
 * windows (day-window.ts).
 */
export function readUpdatedFeed(
  stream: string,
  source: UpdatedFeedSource,
  env: StreamEnv<unknown>,
  cursor: UpdatedFeedCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncIterable<Chunk<UpdatedFeedCursor>> {
  if (env.variant === 'main') {
    return readKeyset(
      stream,
      { key: source.key, updatedAt: (r) => stringField(r, 'updatedAt'), fetch: (args) => source.fetchMain(args) },
      env,
      cursor?.mode === 'keyset' ? cursor : undefined,
      plan,
      signal,
    );
  }
  return readDayWindows(stream, { key: source.key, fetch: (args) => source.fetchBrokerage(args) }, env, asDayCursor(cursor), plan, signal);
}
