import type { Rec } from '../collection.js';
import { pageParams } from '../paging.js';
import type { RequestContext, RouteDef, RouteResult } from '../router.js';

/**
 * Reference data the ERP prices with (spec §4.7): customer discounts and customer rates (arrays of
 * records, filtered by the parties they apply to; rates paged by skip/limit), and the account's
 * dynamic-rates record. Served from the store's PricingBook, which the mutator edits.
 */

const PARTY_FILTERS = ['caller', 'consignee', 'shipper'] as const;

function partyFilter(ctx: RequestContext): (record: Rec) => boolean {
  const wanted = PARTY_FILTERS.map((field) => [field, ctx.query.array(field)] as const).filter(([, ids]) => ids?.length);
  const searchText = ctx.query.string('searchText')?.toLowerCase();
  return (record) =>
    wanted.every(([field, ids]) => ((record[field] as string[] | undefined) ?? []).some((id) => ids?.includes(id))) &&
    (!searchText || JSON.stringify(record).toLowerCase().includes(searchText));
}

function listDiscounts(ctx: RequestContext): RouteResult {
  return { data: ctx.sim.store.pricing.discounts().filter(partyFilter(ctx)) };
}

function listRates(ctx: RequestContext): RouteResult {
  // §8: default 50; at most 50 on main, 1 to 100 on brokerage. No `count` in the answer (§2.1).
  const { skip, limit } = pageParams(ctx.query, ctx.sim.options.variant === 'main' ? 50 : 100);
  return { data: ctx.sim.store.pricing.rates().filter(partyFilter(ctx)).slice(skip, skip + limit) };
}

export const pricingRoutes: RouteDef[] = [
  { method: 'GET', pattern: '/customer-discount', auth: 'access', handler: listDiscounts },
  { method: 'GET', pattern: '/customer-rates', auth: 'access', handler: listRates },
  { method: 'GET', pattern: '/customer-dynamic-rates', auth: 'access', handler: (ctx) => ({ data: ctx.sim.store.pricing.dynamicRates() }) },
];
