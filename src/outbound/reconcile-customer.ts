import type { ApiClient } from '../api/api-client.js';
import { listCustomers, type CustomerListQuery } from '../api/endpoints/customers.js';
import type { Customer } from '../api/schemas/resources.js';
import { CREATED_AT_SLACK_MS, MAX_PAGES, PAGE } from './reconcile.js';

export type CustomerLookup = { found: Customer; matches: number } | { found: null };

/**
 * Looks up the customer an ambiguous `POST /customer` may have created, by the `companyID` and
 * `company_name` it carried: first `searchTerm` on the `companyID` field, then (for a server that
 * ignores `fieldName`) `nameSearch` on the name. Both match substrings, so every record is
 * compared exactly; a customer older than the first send (minus slack) is someone else's.
 * Deleted customers count (`isIncludeDeleted`): one our create made and someone deleted since
 * was created all the same, and must not be created again.
 */
export async function findCreatedCustomer(client: ApiClient, body: Record<string, unknown>, sentAt: string | null, signal: AbortSignal): Promise<CustomerLookup> {
  const companyId = body['companyID'];
  const name = body['company_name'];
  if (typeof companyId !== 'string' || typeof name !== 'string') throw new Error('cannot reconcile: the customer_create carries no companyID and company_name');
  const notBefore = sentAt ? Date.parse(sentAt) - CREATED_AT_SLACK_MS : Number.NEGATIVE_INFINITY;
  const searches: CustomerListQuery[] = [{ searchTerm: companyId, fieldName: 'companyID' }, { nameSearch: name }];
  for (const search of searches) {
    const matches: Customer[] = [];
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await listCustomers(client, { ...search, skip: page * PAGE, limit: PAGE, isIncludeDeleted: true }, signal);
      for (const customer of result.items) {
        if (customer.companyID !== companyId || customer.company_name !== name) continue;
        const createdAt = customer.createdAt;
        if (typeof createdAt === 'string' && Date.parse(createdAt) < notBefore) continue;
        matches.push(customer);
      }
      if (result.items.length + result.rejected.length < PAGE) break;
    }
    // Newest first: the last match is the first created.
    const first = matches.at(-1);
    if (first) return { found: first, matches: matches.length };
  }
  return { found: null };
}
