import { z } from 'zod';
import { listLoads, type LoadListQuery } from '../../api/endpoints/loads.js';
import type { Page } from '../../api/paging.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { requireKey, stringField } from '../streams/common.js';
import { readClosedWindows, windowCursorSchema, type WindowCursor } from './closed-window.js';
import { keysetCursorSchema, readKeyset, type KeysetCursor } from './keyset.js';

export const loadPagesCursorSchema = z.union([keysetCursorSchema, windowCursorSchema]);
export type LoadPagesCursor = KeysetCursor | WindowCursor;

/** Load statuses after which an invoice should exist (main names and brokerage display names). */
const INVOICED_STATUSES: ReadonlySet<string> = new Set(['BILLING', 'PARTIAL_PAID', 'FULL_PAID']);

export function isInvoicedLoadStatus(status: unknown): boolean {
  return typeof status === 'string' && INVOICED_STATUSES.has(status.toUpperCase().replace(/ /g, '_'));
}

/** Filters a reader of `GET /loads` adds to the window (status, charge sets, …). */
export type LoadFilters = Pick<LoadListQuery, 'status' | 'includeChargeSets' | 'includeVendorPay'>;

/**
 * `GET /loads` changed in a range, deleted ones included: main honours `sortBy` on updatedAt
 * (keyset paging on `updatedAtFrom`/`updatedAtTo`); brokerage sorts by createdAt only and filters
 * by `updatedFrom`/`updatedTo` (closed windows). Used by the `loads` stream and by the invoices
 * stream's change feed; `stream` names the reader in errors.
 */
export function readLoadPages(
  stream: string,
  env: StreamEnv<unknown>,
  cursor: LoadPagesCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
  filters: LoadFilters = {},
): AsyncIterable<Chunk<LoadPagesCursor>> {
  const key = (r: RawRecord) => requireKey(stream, r, 'reference_number');
  if (env.variant === 'main') {
    return readKeyset(
      stream,
      {
        key,
        updatedAt: (r) => stringField(r, 'updatedAt'),
        fetch: ({ from, to, skip, limit, signal: s }) =>
          listLoads(env.client, { ...filters, updatedAtFrom: from, updatedAtTo: to, sortBy: { updatedAt: 1 }, isIncludeDeleted: true, skip, limit }, s) as Promise<Page<RawRecord>>,
      },
      env,
      cursor?.mode === 'keyset' ? cursor : undefined,
      plan,
      signal,
    );
  }
  return readClosedWindows(
    stream,
    {
      key,
      paged: true,
      fetch: ({ from, to, skip, limit, signal: s }) =>
        listLoads(env.client, { status: filters.status, updatedFrom: from, updatedTo: to, sortBy: 'asc', isIncludeDeleted: true, skip, limit: limit ?? env.pageSize }, s) as Promise<Page<RawRecord>>,
    },
    env,
    cursor?.mode === 'window' ? cursor : undefined,
    plan,
    signal,
  );
}
