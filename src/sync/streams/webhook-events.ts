import { listWebhookEvents } from '../../api/endpoints/webhook-events.js';
import type { Page } from '../../api/paging.js';
import type { RawRecord, StreamDefinition } from '../stream-definition.js';
import { incrementalWithoutLookback } from '../window-plan.js';
import { readClosedWindows, windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import { noOptions, requireKey, stringField, upsertOrRemovedOp } from './common.js';

const eventKey = (record: RawRecord) => requireKey('webhookEvents', record, '_id');

/**
 * The webhook event log (`GET /webhook/`, spec §4.6), inclusive `occurred_from`/`occurred_to`.
 * Main pages with skip/limit (sorted by createdAt); brokerage has no paging parameters, so each
 * window is one answer.
 */
export const webhookEventsStream: StreamDefinition<WindowCursor, Record<string, never>> = {
  name: 'webhookEvents',
  description: 'Webhook event log (GET /webhook/)',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'webhookEvents',
  optionsSchema: noOptions,
  cursorSchema: windowCursorSchema,
  cursorKind: 'createdAt windows',
  keyDescription: '_id',
  key: eventKey,
  op: upsertOrRemovedOp,
  updatedAt: (record) => stringField(record, 'updatedAt', 'createdAt'),
  resetCursor: (_variant, at) => ({ mode: 'window', highWater: at, spanMs: null, window: null }),
  read: (env, cursor, plan, signal) =>
    readClosedWindows(
      'webhookEvents',
      {
        key: eventKey,
        paged: env.variant === 'main',
        appendOnly: true,
        fetch: ({ from, to, skip, limit, signal: s }) =>
          listWebhookEvents(
            env.client,
            limit === null ? { occurred_from: from, occurred_to: to } : { occurred_from: from, occurred_to: to, skip, limit, sortBy: { createdAt: 1 } },
            s,
          ) as Promise<Page<RawRecord>>,
      },
      env,
      cursor,
      // No lookback in incremental passes (window-plan.ts). A later change to a logged event (its
      // delivery answer, `response`) is therefore seen only when it happened within the safety
      // lag; a backfill re-reads.
      incrementalWithoutLookback(plan),
      signal,
    ),
};
