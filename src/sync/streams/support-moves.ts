import { z } from 'zod';
import { listSupportMoves } from '../../api/endpoints/support-moves.js';
import type { Page } from '../../api/paging.js';
import type { RawRecord, StreamDefinition } from '../stream-definition.js';
import { readClosedWindows, windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import { booleanOption, requireKey, stringField, upsertOrRemovedOp } from './common.js';

const supportMoveOptions = z.strictObject({
  /** Include `driverPay` in each support move. */
  includeDriverPay: booleanOption.default(true),
});

const supportMoveKey = (record: RawRecord) => requireKey('supportMoves', record, 'supportMoveNumber', '_id');

/** Main: support moves. No `sortBy`: closed updatedAt windows with a stability check. */
export const supportMovesStream: StreamDefinition<WindowCursor, z.infer<typeof supportMoveOptions>> = {
  name: 'supportMoves',
  description: 'Support moves (GET /support-move, main)',
  variants: ['main'],
  pagedEndpoint: 'supportMoves',
  optionsSchema: supportMoveOptions,
  cursorSchema: windowCursorSchema,
  cursorKind: 'updatedAt closed windows',
  keyDescription: 'supportMoveNumber (else _id)',
  key: supportMoveKey,
  op: upsertOrRemovedOp,
  updatedAt: (record) => stringField(record, 'updatedAt'),
  resetCursor: (_variant, at) => ({ mode: 'window', highWater: at, spanMs: null, window: null }),
  read: (env, cursor, plan, signal) =>
    readClosedWindows(
      'supportMoves',
      {
        key: supportMoveKey,
        paged: true,
        // Every /bills and /support-move answer carries the window's count (spec §2.1).
        countOnEveryPage: true,
        fetch: ({ from, to, skip, limit, signal: s }) =>
          listSupportMoves(
            env.client,
            { updatedAtFrom: from, updatedAtTo: to, skip, limit: limit ?? env.pageSize, includeDriverPay: env.options.includeDriverPay || undefined },
            s,
          ) as Promise<Page<RawRecord>>,
      },
      env,
      cursor,
      plan,
      signal,
    ),
};
