import type { ApiVariant } from './variant.js';

/** List endpoints with a documented page-size bound (spec §8). */
export type PagedEndpoint =
  | 'loads'
  | 'invoices'
  | 'bills'
  | 'supportMoves'
  | 'customers'
  | 'consignees'
  | 'customerRates'
  | 'audits'
  | 'webhookEvents';

const BROKERAGE_100: ReadonlySet<PagedEndpoint> = new Set(['invoices', 'customers', 'consignees', 'customerRates']);

/**
 * The largest `limit` an endpoint accepts. Exceeding it is an error on the server, not a clamp,
 * so configured page sizes are checked against this at startup. Brokerage `/loads` has no
 * documented bound: the main bound (50) is used there as the safe choice.
 */
export function maxPageSize(variant: ApiVariant, endpoint: PagedEndpoint): number {
  if (variant === 'brokerage' && BROKERAGE_100.has(endpoint)) return 100;
  return 50;
}
