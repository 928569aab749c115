import { presentEvent } from './events.js';
import type { PricingList } from './pricing-book.js';
import type { SimStore } from './store.js';

export const TRUTH_RESOURCES = ['loads', 'invoices', 'bills', 'supportMoves', 'customers', 'consignees', 'loadAudits', 'customerAudits', 'webhookEvents', 'customerDiscounts', 'customerRates', 'customerDynamicRates'] as const;
export type TruthResource = (typeof TRUTH_RESOURCES)[number];

const YIELD_EVERY = 2_000;

/** Reference-data resources: every entry ever listed, removed ones with `isDeleted: true`. */
const PRICING_RESOURCES = {
  customerDiscounts: 'discounts',
  customerRates: 'rates',
  customerDynamicRates: 'dynamicRules',
} as const satisfies Partial<Record<TruthResource, PricingList>>;

const isPricing = (resource: TruthResource): resource is keyof typeof PRICING_RESOURCES => Object.hasOwn(PRICING_RESOURCES, resource);

/**
 * Every current record of a resource, including deleted loads (isDeleted true), generated on the
 * fly so that a million loads stream in constant memory. Yields to the event loop now and then so
 * a long stream does not starve the HTTP server that runs in the same process.
 */
export async function* truth(store: SimStore, resource: TruthResource): AsyncGenerator<Record<string, unknown>> {
  let n = 0;
  const source: Iterable<unknown> =
    isPricing(resource) ? store.pricing.truth(PRICING_RESOURCES[resource])
    : resource === 'loadAudits' ? [...store.loadAudits.records]
    : resource === 'customerAudits' ? [...store.customerAudits.records]
    : resource === 'webhookEvents' ? store.events.records.map(presentEvent)
    : store[resource].all();
  for (const record of source) {
    yield record as Record<string, unknown>;
    if (++n % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
