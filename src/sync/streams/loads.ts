import { z } from 'zod';
import { listLoads } from '../../api/endpoints/loads.js';
import type { Page } from '../../api/paging.js';
import type { StreamDefinition, RawRecord, Chunk, RunPlan, StreamEnv } from '../stream-definition.js';
import { keysetCursorSchema, readKeyset, type KeysetCursor } from '../strategies/keyset.js';
import { windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import { asDayCursor, dayCursorAt, dayCursorSchema, readDayWindows, type DayCursor } from '../strategies/day-window.js';
import type { SyncSideStore } from '../../state/stores/sync-side-store.js';
import { booleanOption, deletedFlagOp, requireKey, stringField } from './common.js';

const loadsOptions = z.strictObject({
  /** Main: include `chargeSets` in each load. */
  includeChargeSets: booleanOption.default(false),
  /** Main: include `vendorPay` in each load. */
  includeVendorPay: booleanOption.default(false),
});
type LoadsOptions = z.infer<typeof loadsOptions>;

/** The cursor of `readLoadChanges`: keyset on main, day windows on brokerage; `window` is what brokerage stored before (read once, then replaced). */
export const loadChangesCursorSchema = z.union([keysetCursorSchema, dayCursorSchema, windowCursorSchema]);
export type LoadsCursor = KeysetCursor | DayCursor | WindowCursor;

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
 * Loads changed since the cursor, deleted ones included (`isIncludeDeleted`): the one change feed
 * of loads by updatedAt, for the loads stream and any reader that follows loads (e.g. invoices
 * whose loads changed). Main honours `sortBy` on updatedAt with datetime filters: keyset paging.
 * Brokerage filters by `updatedFrom`/`updatedTo` DATES (§4.4.3) and sorts by `asc|desc` alone:
 * day windows (strategies/day-window.ts).
 */
export function readLoadChanges(
  env: StreamEnv<Partial<LoadsOptions>>,
  cursor: LoadsCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncIterable<Chunk<LoadsCursor>> {
  const key = (r: RawRecord) => requireKey('loads', r, 'reference_number');
  if (env.variant === 'main') {
    return readKeyset(
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
  }
  return readDayWindows(
    'loads',
    {
      key,
      fetch: ({ fromDay, toDay, skip, limit, signal: s }) =>
        listLoads(env.client, { updatedFrom: fromDay, updatedTo: toDay, sortBy: 'asc', isIncludeDeleted: true, skip, limit }, s) as Promise<Page<RawRecord>>,
    },
    env,
    asDayCursor(cursor),
    plan,
    signal,
  );
}

/** Loads, deleted ones delivered as tombstones (design §2.6). */
export const loadsStream: StreamDefinition<LoadsCursor, LoadsOptions> = {
  name: 'loads',
  description: 'Loads (GET /loads), deleted loads as tombstones',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'loads',
  optionsSchema: loadsOptions,
  cursorSchema: loadChangesCursorSchema,
  cursorKind: 'updatedAt keyset (main), day windows (brokerage)',
  key: (record) => requireKey('loads', record, 'reference_number'),
  op: deletedFlagOp,
  updatedAt: (record) => stringField(record, 'updatedAt'),
  resetCursor: (variant, at) => (variant === 'main' ? { mode: 'keyset', highWater: at, window: null } : dayCursorAt(at)),
  async *read(env, cursor, plan, signal) {
    for await (const chunk of readLoadChanges(env, cursor, plan, signal)) yield { ...chunk, afterCommit: invoiceCandidates(chunk.records) };
  },
};
