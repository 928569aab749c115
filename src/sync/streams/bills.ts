import { listBills } from '../../api/endpoints/bills.js';
import type { Page } from '../../api/paging.js';
import type { RawRecord, StreamDefinition } from '../stream-definition.js';
import { readClosedWindows, windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import { noOptions, requireKey, stringField, upsertOrRemovedOp } from './common.js';

const billKey = (record: RawRecord) => requireKey('bills', record, 'billId', '_id', 'billNumber');

/** Main: bills. No `sortBy` on `/bills`: closed updatedAt windows with a stability check. */
export const billsStream: StreamDefinition<WindowCursor, Record<string, never>> = {
  name: 'bills',
  description: 'Vendor bills (GET /bills, main)',
  variants: ['main'],
  pagedEndpoint: 'bills',
  optionsSchema: noOptions,
  cursorSchema: windowCursorSchema,
  cursorKind: 'updatedAt closed windows',
  keyDescription: 'billId (else _id, billNumber)',
  key: billKey,
  op: upsertOrRemovedOp,
  updatedAt: (record) => stringField(record, 'updatedAt'),
  resetCursor: (_variant, at) => ({ mode: 'window', highWater: at, spanMs: null, window: null }),
  read: (env, cursor, plan, signal) =>
    readClosedWindows(
      'bills',
      {
        key: billKey,
        paged: true,
        // Every /bills and /support-move answer carries the window's count (spec §2.1).
        countOnEveryPage: true,
        fetch: ({ from, to, skip, limit, signal: s }) =>
          listBills(env.client, { updatedAtFrom: from, updatedAtTo: to, skip, limit: limit ?? env.pageSize }, s) as Promise<Page<RawRecord>>,
      },
      env,
      cursor,
      plan,
      signal,
    ),
};
