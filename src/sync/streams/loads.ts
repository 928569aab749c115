import { z } from 'zod';
import type { StreamDefinition, RawRecord } from '../stream-definition.js';
import { isInvoicedLoadStatus, loadPagesCursorAt, loadPagesCursorSchema, readLoadPages, type LoadPagesCursor } from '../strategies/load-pages.js';
import type { SyncSideStore } from '../../state/stores/sync-side-store.js';
import { booleanOption, deletedFlagOp, requireKey, stringField } from './common.js';

const loadsOptions = z.strictObject({
  /** Main: include `chargeSets` in each load. */
  includeChargeSets: booleanOption.default(false),
  /** Main: include `vendorPay` in each load. */
  includeVendorPay: booleanOption.default(false),
});
type LoadsOptions = z.infer<typeof loadsOptions>;

const loadsCursor = loadPagesCursorSchema;
type LoadsCursor = LoadPagesCursor;

function invoiceCandidates(records: RawRecord[]): Array<(side: SyncSideStore) => Promise<void>> {
  const refs = records
    // Deleted loads too: a load deleted after billing keeps its invoice, and a tombstone may be
    // the only version of the load this daemon ever sees (found by the chaos suite).
    .filter((r) => isInvoicedLoadStatus(r.status))
    .map((r) => String(r.reference_number));
  return refs.length > 0 ? [async (side) => void (await side.addInvoiceCandidates(refs, 'load status'))] : [];
}

/**
 * Loads, deleted ones included (`isIncludeDeleted`) and delivered as tombstones (design §2.6),
 * read through the one change feed of loads (strategies/load-pages.ts): keyset on main, day
 * windows on brokerage, whose updatedAt filters are dates.
 */
export const loadsStream: StreamDefinition<LoadsCursor, LoadsOptions> = {
  name: 'loads',
  description: 'Loads (GET /loads), deleted loads as tombstones',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'loads',
  optionsSchema: loadsOptions,
  cursorSchema: loadsCursor,
  cursorKind: 'updatedAt keyset (main), day windows (brokerage)',
  keyDescription: 'reference_number',
  key: (record) => requireKey('loads', record, 'reference_number'),
  op: deletedFlagOp,
  updatedAt: (record) => stringField(record, 'updatedAt'),
  resetCursor: (variant, at) => loadPagesCursorAt(variant, at),
  async *read(env, cursor, plan, signal) {
    const chunks = readLoadPages('loads', env, cursor, plan, signal, {
      includeChargeSets: env.options.includeChargeSets || undefined,
      includeVendorPay: env.options.includeVendorPay || undefined,
    });
    for await (const chunk of chunks) yield { ...chunk, afterCommit: invoiceCandidates(chunk.records) };
  },
};
