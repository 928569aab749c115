import { getCustomerDynamicRates, listCustomerDiscounts, listCustomerRates } from '../../api/endpoints/customers.js';
import { offsetPages, type RejectedItem } from '../../api/paging.js';
import type { RawRecord } from '../stream-definition.js';
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

export const customerRatesStream = snapshotStream({
  name: 'customerRates',
  description: 'Customer rates (GET /customer-rates, paged)',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'customerRates',
  keyDescription: '_id',
  key: (record: RawRecord) => requireKey('customerRates', record, '_id'),
  fetchAll: async (env, signal) => {
    const items: RawRecord[] = [];
    const rejected: RejectedItem[] = [];
    let pages = 0;
    // No `count` in this answer: the pages end at the first short one.
    for await (const page of offsetPages((skip, limit) => listCustomerRates(env.client, { skip, limit }, signal), { limit: env.pageSize, signal })) {
      pages += 1;
      items.push(...page.items);
      rejected.push(...page.rejected);
    }
    return { items, rejected, pages };
  },
});

/**
 * The account has one dynamic-rates record holding its rules. Each rule is a record of its own
 * (key: the rule's `_id`), so editing one rule re-delivers that rule only and a deleted rule is a
 * tombstone. Each carries `dynamicRatesId` and `carrier` of the record it belongs to; the
 * record's `updatedAt` is left out on purpose, as it changes with any rule and would re-deliver
 * them all.
 */
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
