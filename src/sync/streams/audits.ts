import { listCustomerAudits } from '../../api/endpoints/customers.js';
import { listLoadAudits } from '../../api/endpoints/loads.js';
import type { Page } from '../../api/paging.js';
import type { RawRecord, StreamDefinition } from '../stream-definition.js';
import { windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import { readTokenWindows } from '../strategies/token-window.js';
import { incrementalWithoutLookback } from '../window-plan.js';
import { auditKey, noOptions, stringField, upsertOrRemovedOp } from './common.js';

function auditStream(name: 'loadAudits' | 'customerAudits'): StreamDefinition<WindowCursor, Record<string, never>> {
  const list = name === 'loadAudits' ? listLoadAudits : listCustomerAudits;
  return {
    name,
    description: name === 'loadAudits' ? 'Load audit records (GET /audit/load, main)' : 'Customer audit records (GET /audit/customer, main)',
    variants: ['main'],
    pagedEndpoint: 'audits',
    optionsSchema: noOptions,
    cursorSchema: windowCursorSchema,
    cursorKind: 'createdAt windows',
    keyDescription: '_id (else a digest of entity, action, actor, time and changes)',
    key: auditKey,
    op: upsertOrRemovedOp,
    updatedAt: (record) => stringField(record, 'createdAt'),
    resetCursor: (_variant, at) => ({ mode: 'window', highWater: at, spanMs: null, window: null }),
    read: (env, cursor, plan, signal) =>
      readTokenWindows(
        {
          fetch: ({ from, to, pageToken, limit, signal: s }) =>
            list(env.client, { createdAtFrom: from, createdAtTo: to, limit, pageToken }, s) as Promise<Page<RawRecord>>,
        },
        env,
        cursor,
        // Append-only logs by createdAt: no lookback in incremental passes (window-plan.ts).
        incrementalWithoutLookback(plan),
        signal,
      ),
  };
}

export const loadAuditsStream = auditStream('loadAudits');
export const customerAuditsStream = auditStream('customerAudits');
