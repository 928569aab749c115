import { listConsignees } from '../../api/endpoints/consignees.js';
import { listCustomers } from '../../api/endpoints/customers.js';
import type { Page } from '../../api/paging.js';
import type { QueryParams } from '../../api/query-string.js';
import type { Chunk, RawRecord, StreamDefinition } from '../stream-definition.js';
import { readUpdatedFeed, updatedFeedCursorAt, updatedFeedCursorSchema, type UpdatedFeedCursor } from '../strategies/updated-feed.js';
import { deletedFlagOp, noOptions, requireKey, stringField } from './common.js';

type CustomerCursor = UpdatedFeedCursor;

/**
 * Customers and consignees (customer-shaped records). Main honours `sortBy` on updatedAt with
 * `updatedAtFrom/To` datetimes: keyset. Brokerage has only the `updatedFrom/To` DATES (§4.7,
 * §4.8): day windows (strategies/day-window.ts), customers in createdAt order (§4.7 `sortBy`),
 * consignees in the server's own order (§4.8 gives brokerage no `sortBy`).
 */
function customerLikeStream(name: 'customers' | 'consignees'): StreamDefinition<CustomerCursor, Record<string, never>> {
  const list = name === 'customers' ? listCustomers : listConsignees;
  const key = (record: RawRecord) => requireKey(name, record, '_id');
  const extra: QueryParams = name === 'customers' ? { isIncludeDeleted: true } : {};
  const brokerageSort: QueryParams = name === 'customers' ? { sortBy: { createdAt: 1 } } : {};
  return {
    name,
    description: name === 'customers' ? 'Customers (GET /customer/), deleted ones as tombstones' : 'Consignees (GET /consignee/)',
    variants: ['main', 'brokerage'],
    pagedEndpoint: name,
    optionsSchema: noOptions,
    cursorSchema: updatedFeedCursorSchema,
    cursorKind: 'updatedAt keyset (main), day windows (brokerage)',
    keyDescription: '_id',
    key,
    op: deletedFlagOp,
    updatedAt: (record) => stringField(record, 'updatedAt'),
    resetCursor: (variant, at) => updatedFeedCursorAt(variant, at),
    read(env, cursor, plan, signal): AsyncIterable<Chunk<CustomerCursor>> {
      return readUpdatedFeed(
        name,
        {
          key,
          fetchMain: ({ from, to, skip, limit, signal: s, peek }) =>
            list(env.client, { ...extra, updatedAtFrom: from, updatedAtTo: to, sortBy: { updatedAt: 1 }, skip, limit }, s, peek) as Promise<Page<RawRecord>>,
          fetchBrokerage: ({ fromDay, toDay, skip, limit, signal: s }) =>
            list(env.client, { ...extra, ...brokerageSort, updatedFrom: fromDay, updatedTo: toDay, skip, limit }, s) as Promise<Page<RawRecord>>,
        },
        env,
        cursor,
        plan,
        signal,
      );
    },
  };
}

export const customersStream = customerLikeStream('customers');
export const consigneesStream = customerLikeStream('consignees');
