import { getCustomerDynamicRates, listCustomerDiscounts, listCustomerRates } from '../../api/endpoints/customers.js';
import type { RawRecord } from '../stream-definition.js';
import { readOverlappedList } from '../strategies/overlapped-list.js';
import { requireKey } from './common.js';
import { snapshotStream } from './snapshot-stream.js';

/**
 * Reference data the ERP prices with (spec §2.12, §4.7), both variants, each read whole every
 * run (src/sync/strategies/snapshot.ts): an entry that is no longer listed arrives as a tombstone.
 *
 * Keys: a discount and a rate by their `_id`; a dynamic rate by its rule's `_id` (one record per
 * rule, see below). An element without `_id` fails its schema and is reported, never keyed by its
 * content — a content key would turn every edit into a removal plus an addition.
 */

export const customerDiscountsStream = snapshotStream({
  name: 'customerDiscounts',
  description: 'Customer discounts (GET /customer-discount)',
  variants: ['main', 'brokerage'],
  keyDescription: '_id',
  key: (record: RawRecord) => requireKey('customerDiscounts', record, '_id'),
  fetchAll: async (env, signal) => {
    const page = await listCustomerDiscounts(env.client, {}, signal);
    return { items: page.items, rejected: page.rejected };
  },
});

const customerRateKey = (record: RawRecord) => requireKey('customerRates', record, '_id');

export const customerRatesStream = snapshotStream({
  name: 'customerRates',
  description: 'Customer rates (GET /customer-rates, paged)',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'customerRates',
  keyDescription: '_id',
  key: customerRateKey,
  // No `count` in this answer: the pages end at the first short one. Pages overlap by one entry,
  // so a read that misses a known rate proves the rate gone without reading the list twice.
  fetchAll: (env, signal) => readOverlappedList((skip, limit) => listCustomerRates(env.client, { skip, limit }, signal), customerRateKey, env.pageSize, signal),
});

export const customerDynamicRatesStream = snapshotStream({
  name: 'customerDynamicRates',
  description: 'Customer dynamic rate rules (GET /customer-dynamic-rates)',
  variants: ['main', 'brokerage'],
  keyDescription: "the rule's _id",
  key: (record: RawRecord) => requireKey('customerDynamicRates', record, '_id'),
  fetchAll: async (env, signal) => {
    const answer = await getCustomerDynamicRates(env.client, signal);
    return { items: dynamicRateRecords(answer), rejected: answer.rejected };
  },
});

/** The records of the dynamic-rates answer: one per rule, with the owning record's id and carrier. */
export function dynamicRateRecords({ header, rules }: Pick<Awaited<ReturnType<typeof getCustomerDynamicRates>>, 'header' | 'rules'>): RawRecord[] {
  const owner = { dynamicRatesId: header?._id ?? null, carrier: header?.carrier ?? null };
  return rules.map((rule) => ({ ...owner, ...rule }));
}
