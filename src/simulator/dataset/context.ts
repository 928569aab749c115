import type { Variant } from '../options.js';
import type { Timeline } from '../timeline.js';

/** What every generator needs to build a base record deterministically. */
export interface DatasetContext {
  variant: Variant;
  seed: number;
  counts: { loads: number; customers: number; consignees: number; bills: number; supportMoves: number };
  timelines: { loads: Timeline; customers: Timeline; consignees: Timeline; bills: Timeline; supportMoves: Timeline };
}

const ISO_CACHE_SIZE = 4096;
const isoCache = new Map<number, string>();

/**
 * ISO string of a timestamp. Generated records reuse few distinct instants (tie groups share them),
 * and toISOString dominated page generation, so recent results are memoised.
 */
export function iso(ms: number): string {
  let value = isoCache.get(ms);
  if (value === undefined) {
    value = new Date(ms).toISOString();
    if (isoCache.size >= ISO_CACHE_SIZE) isoCache.clear();
    isoCache.set(ms, value);
  }
  return value;
}

export function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** Parses an ISO string field of a record to ms (NaN when absent). */
export function msOf(record: Record<string, unknown>, field: string): number {
  const value = record[field];
  return typeof value === 'string' ? Date.parse(value) : Number.NaN;
}
