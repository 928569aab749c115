import { listConsignees } from '../../api/endpoints/consignees.js';
import { listCustomers } from '../../api/endpoints/customers.js';
import type { Page } from '../../api/paging.js';
import type { QueryParams } from '../../api/query-string.js';
import type { Chunk, RawRecord, StreamDefinition } from '../stream-definition.js';
import { readClosedWindows, windowCursorSchema, type WindowCursor } from '../strategies/closed-window.js';
import { keysetCursorSchema, readKeyset, type KeysetCursor } from '../strategies/keyset.js';
import { z } from 'zod';
import { deletedFlagOp, noOptions, requireKey, stringField } from './common.js';

type CustomerCursor = KeysetCursor | WindowCursor;

/**
 * Customers and consignees (customer-shaped records). Main honours `sortBy` on updatedAt with
 * `updatedAtFrom/To` datetimes: keyset. Brokerage has only `updatedFrom/To`: closed windows
 * (with `count`).
 */
function customerLikeStream(name: 'customers' | 'consignees'): StreamDefinition<CustomerCursor, Record<string, never>> {
  const list = name === 'customers' ? listCustomers : listConsignees;
  const key = (record: RawRecord) => requireKey(name, record, '_id');
  const extra: QueryParams = name === 'customers' ? { isIncludeDeleted: true } : {};
  return {
    name,
    description: name === 'customers' ? 'Customers (GET /customer/), deleted ones as tombstones' : 'Consignees (GET /consignee/)',
    variants: ['main', 'brokerage'],
    pagedEndpoint: name,
    optionsSchema: noOptions,
    cursorSchema: z.union([keysetCursorSchema, windowCursorSchema]),
    cursorKind: 'updatedAt keyset (main), closed windows (brokerage)',
    key,
    op: deletedFlagOp,
    updatedAt: (record) => stringField(record, 'updatedAt'),
    resetCursor: (variant, at) =>
      variant === 'main' ? { mode: 'keyset', highWater: at, window: null } : { mode: 'window', highWater: at, spanMs: null, window: null },
    read(env, cursor, plan, signal): AsyncIterable<Chunk<CustomerCursor>> {
      return readChunks(env, cursor, plan, signal);
    },
  };

  function readChunks(...[env, cursor, plan, signal]: Parameters<StreamDefinition<CustomerCursor, Record<string, never>>['read']>): AsyncIterable<Chunk<CustomerCursor>> {
      if (env.variant === 'main') {
        return readKeyset(
          name,
          {
            key,
            updatedAt: (r) => stringField(r, 'updatedAt'),
            fetch: ({ from, to, skip, limit, signal: s }) =>
              list(env.client, { ...extra, updatedAtFrom: from, updatedAtTo: to, sortBy: { updatedAt: 1 }, skip, limit }, s) as Promise<Page<RawRecord>>,
          },
          env,
          cursor?.mode === 'keyset' ? cursor : undefined,
          plan,
          signal,
        );
      }
      return readClosedWindows(
        name,
        {
          key,
          paged: true,
          fetch: ({ from, to, skip, limit, signal: s }) =>
            list(env.client, { ...extra, updatedFrom: from, updatedTo: to, skip, limit: limit ?? env.pageSize }, s) as Promise<Page<RawRecord>>,
        },
        env,
        cursor?.mode === 'window' ? cursor : undefined,
        plan,
        signal,
      );
  }
}


export const customersStream = customerLikeStream('customers');
export const consigneesStream = customerLikeStream('consignees');
