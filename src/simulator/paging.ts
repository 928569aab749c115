import { badRequest } from './http-error.js';
import type { QueryParams } from './query-params.js';
import type { RangeBound } from './collection.js';

/** skip/limit per §8: a limit above the maximum is a 400, never a silent clamp. */
export function pageParams(query: QueryParams, max: number, defaultLimit = Math.min(50, max)): { skip: number; limit: number } {
  const limit = query.integer('limit');
  if (limit !== undefined && (limit < 1 || limit > max)) throw badRequest(`limit must be between 1 and ${max}`);
  const skip = query.integer('skip');
  if (skip !== undefined && skip < 0) throw badRequest('skip must not be negative');
  return { skip: skip ?? 0, limit: limit ?? defaultLimit };
}

/**
 * Collects time-range filters. Each name maps to a field and a side; date-only upper bounds cover
 * the whole day. All bounds are inclusive. With `days` (brokerage date filters, spec §4.4.3 lists
 * them under "Dates") every value counts by its UTC day, a time part being dropped: `from` means
 * the day's first millisecond, `to` its last — `updatedFrom=2026-03-04T15:00Z` and
 * `updatedTo=2026-03-04T09:00Z` both select all of 2026-03-04.
 */
export function rangeParams(query: QueryParams, spec: Array<[param: string, field: string, side: 'from' | 'to']>, options: { days?: boolean } = {}): RangeBound[] {
  const byField = new Map<string, RangeBound>();
  for (const [param, field, side] of spec) {
    const ms = options.days ? query.day(param, side === 'to') : query.date(param, side === 'to');
    if (ms === undefined) continue;
    const bound = byField.get(field) ?? { field };
    if (side === 'from') bound.from = bound.from === undefined ? ms : Math.max(bound.from, ms);
    else bound.to = bound.to === undefined ? ms : Math.min(bound.to, ms);
    byField.set(field, bound);
  }
  return [...byField.values()];
}

export const MAIN_DATETIME_RANGES: Array<[string, string, 'from' | 'to']> = [
  ['createdAtFrom', 'createdAt', 'from'],
  ['createdAtTo', 'createdAt', 'to'],
  ['updatedAtFrom', 'updatedAt', 'from'],
  ['updatedAtTo', 'updatedAt', 'to'],
];

export const DATE_RANGES: Array<[string, string, 'from' | 'to']> = [
  ['createdFrom', 'createdAt', 'from'],
  ['createdTo', 'createdAt', 'to'],
  ['updatedFrom', 'updatedAt', 'from'],
  ['updatedTo', 'updatedAt', 'to'],
];
