import { listLoads, type LoadListQuery } from '../../api/endpoints/loads.js';
import type { Page } from '../../api/paging.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { requireKey } from '../streams/common.js';
import { readUpdatedFeed, updatedFeedCursorAt, updatedFeedCursorSchema, type UpdatedFeedCursor } from './updated-feed.js';

export const loadPagesCursorSchema = updatedFeedCursorSchema;
export type LoadPagesCursor = UpdatedFeedCursor;

/** Where a load reader starts reading at `at` (the stream's reset, the invoice feed's first pass). */
export const loadPagesCursorAt = updatedFeedCursorAt;

/** Load statuses after which an invoice should exist (main names and brokerage display names). */
const INVOICED_STATUSES: ReadonlySet<string> = new Set(['BILLING', 'PARTIAL_PAID', 'FULL_PAID']);

export function isInvoicedLoadStatus(status: unknown): boolean {
  return typeof status === 'string' && INVOICED_STATUSES.has(status.toUpperCase().replace(/ /g, '_'));
}

/** Filters a reader of `GET /loads` adds to the window (status, charge sets, …). */
export type LoadFilters = Pick<LoadListQuery, 'status' | 'includeChargeSets' | 'includeVendorPay'>;

/**
 * `GET /loads` changed in a range, deleted ones included: the one change feed of loads by
 * updatedAt, used by the `loads` stream and by the invoices stream's change feed (`stream` names
 * the reader in errors). Main honours `sortBy` on updatedAt with datetime filters: keyset paging.
 * Brokerage filters by `updatedFrom`/`updatedTo` DATES (§4.4.3) and sorts by `asc|desc` alone:
 * day windows (strategies/day-window.ts). The status filter is sent on main only: brokerage names
 * statuses for display (§3.1), so a brokerage reader filters what it reads itself.
 */
export function readLoadPages(
  stream: string,
  env: StreamEnv<unknown>,
  cursor: LoadPagesCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
  filters: LoadFilters = {},
): AsyncIterable<Chunk<LoadPagesCursor>> {
  return readUpdatedFeed(
    stream,
    {
      key: (r) => requireKey(stream, r, 'reference_number'),
      fetchMain: ({ from, to, skip, limit, signal: s, peek }) =>
        listLoads(env.client, { ...filters, updatedAtFrom: from, updatedAtTo: to, sortBy: { updatedAt: 1 }, isIncludeDeleted: true, skip, limit }, s, peek) as Promise<Page<RawRecord>>,
      fetchBrokerage: ({ fromDay, toDay, skip, limit, signal: s }) =>
        listLoads(env.client, { updatedFrom: fromDay, updatedTo: toDay, sortBy: 'asc', isIncludeDeleted: true, skip, limit }, s) as Promise<Page<RawRecord>>,
    },
    env,
    cursor,
    plan,
    signal,
  );
}
