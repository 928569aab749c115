import { z } from 'zod';
import { listLoads } from '../../api/endpoints/loads.js';
import type { Page } from '../../api/paging.js';
import type { StreamDefinition, RawRecord, Chunk } from '../stream-definition.js';
import { keysetCursorSchema, readKeyset, type KeysetCursor } from '../strategies/keyset.js';
import { readClosedWindows, windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import type { SyncSideStore } from '../../state/stores/sync-side-store.js';
import { booleanOption, deletedFlagOp, requireKey, stringField } from './common.js';

const loadsOptions = z.strictObject({
  /** Main: include `chargeSets` in each load. */
  includeChargeSets: booleanOption.default(false),
  /** Main: include `vendorPay` in each load. */
  includeVendorPay: booleanOption.default(false),
});
type LoadsOptions = z.infer<typeof loadsOptions>;

const loadsCursor = z.union([keysetCursorSchema, windowCursorSchema]);
type LoadsCursor = KeysetCursor | WindowCursor;

/** Load statuses after which an invoice should exist (main names and brokerage display names). */
const INVOICED_STATUSES = new Set(['BILLING', 'PARTIAL_PAID', 'FULL_PAID']);

function invoiceCandidates(records: RawRecord[]): Array<(side: SyncSideStore) => Promise<void>> {
  const refs = records
    // Deleted loads too: a load deleted after billing keeps its invoice, and a tombstone may be
    // the only version of the load this daemon ever sees (found by the chaos suite).
    .filter((r) => typeof r.status === 'string' && INVOICED_STATUSES.has(r.status.toUpperCase().replace(/ /g, '_')))
    .map((r) => String(r.reference_number));
  return refs.length > 0 ? [async (side) => void (await side.addInvoiceCandidates(refs, 'load status'))] : [];
}

/**
 * Loads, deleted ones included (`isIncludeDeleted`) and delivered as tombstones (design §2.6).
 * Main honours `sortBy` on updatedAt: keyset paging. Brokerage sorts by createdAt only and
 * filters by `updatedFrom`/`updatedTo`: closed windows.
 */
export const loadsStream: StreamDefinition<LoadsCursor, LoadsOptions> = {
  name: 'loads',
  description: 'Loads (GET /loads), deleted loads as tombstones',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'loads',
  optionsSchema: loadsOptions,
  cursorSchema: loadsCursor,
  cursorKind: 'updatedAt keyset (main), closed windows (brokerage)',
  key: (record) => requireKey('loads', record, 'reference_number'),
  op: deletedFlagOp,
  updatedAt: (record) => stringField(record, 'updatedAt'),
  resetCursor: (variant, at) =>
    variant === 'main' ? { mode: 'keyset', highWater: at, window: null } : { mode: 'window', highWater: at, spanMs: null, window: null },
  async *read(env, cursor, plan, signal) {
    const key = (r: RawRecord) => requireKey('loads', r, 'reference_number');
    let chunks: AsyncIterable<Chunk<LoadsCursor>>;
    if (env.variant === 'main') {
      chunks = readKeyset(
        'loads',
        {
          key,
          updatedAt: (r) => stringField(r, 'updatedAt'),
          fetch: ({ from, to, skip, limit, signal: s }) =>
            listLoads(
              env.client,
              {
                updatedAtFrom: from,
                updatedAtTo: to,
                sortBy: { updatedAt: 1 },
                isIncludeDeleted: true,
                skip,
                limit,
                includeChargeSets: env.options.includeChargeSets || undefined,
                includeVendorPay: env.options.includeVendorPay || undefined,
              },
              s,
            ) as Promise<Page<RawRecord>>,
        },
        env,
        cursor?.mode === 'keyset' ? cursor : undefined,
        plan,
        signal,
      );
    } else {
      chunks = readClosedWindows(
        'loads',
        {
          key,
          paged: true,
          fetch: ({ from, to, skip, limit, signal: s }) =>
            listLoads(env.client, { updatedFrom: from, updatedTo: to, sortBy: 'asc', isIncludeDeleted: true, skip, limit: limit ?? env.pageSize }, s) as Promise<
              Page<RawRecord>
            >,
        },
        env,
        cursor?.mode === 'window' ? cursor : undefined,
        plan,
        signal,
      );
    }
    for await (const chunk of chunks) yield { ...chunk, afterCommit: invoiceCandidates(chunk.records) };
  },
};
