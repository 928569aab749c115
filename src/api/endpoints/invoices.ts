import { z } from 'zod';
import type { ApiClient } from '../api-client.js';
import type { Page } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import { invoiceSchema, type Invoice } from '../schemas/resources.js';
import { listCall, pathParam } from './list-call.js';

/** `GET /invoices` query (spec §4.2). There is no updatedAt filter: only billing dates. */
export type InvoiceListQuery = QueryParams & {
  skip?: number;
  limit?: number;
  invoiceNumbers?: string[];
  status?: string[];
  billingFrom?: string;
  billingTo?: string;
  type_of_load?: string[];
  isIncludeDeleted?: boolean;
  isDeleted?: boolean;
  isSubCustomer?: boolean;
  isShowCombinedInvoices?: boolean;
  sortBy?: Record<string, 1 | -1>;
  includePaymentHistory?: boolean;
};

export function listInvoices(client: ApiClient, query: InvoiceListQuery, signal?: AbortSignal): Promise<Page<Invoice>> {
  const effective = client.variant === 'main' ? query : withoutKeys(query, ['includePaymentHistory']);
  return listCall(client, '/invoices', effective, invoiceSchema, { signal });
}

/**
 * `GET /invoices/<reference_number>` by LOAD reference number. Returns invoices the list endpoint
 * has been seen to omit (design §2.4), so it is the gap-fill path.
 */
export async function getInvoice(
  client: ApiClient,
  loadReferenceNumber: string,
  options: { includePaymentHistory?: boolean } = {},
  signal?: AbortSignal,
): Promise<Invoice> {
  const result = await client.call({
    method: 'GET',
    route: '/invoices/:reference_number',
    path: `/invoices/${pathParam(loadReferenceNumber)}`,
    query: client.variant === 'main' ? { includePaymentHistory: options.includePaymentHistory } : {},
    schema: invoiceSchema,
    signal,
  });
  return result.data;
}

/** Main: `POST /invoices` — invoice charge sets by id or reference number. */
export async function createInvoices(
  client: ApiClient,
  body: { chargeIds?: string[]; chargeReferenceNumbers?: string[] },
  signal?: AbortSignal,
): Promise<void> {
  await client.call({ method: 'POST', route: '/invoices', body, schema: z.unknown(), variants: ['main'], signal });
}

function withoutKeys<T extends object>(value: T, keys: string[]): T {
  const copy = { ...value } as Record<string, unknown>;
  for (const key of keys) delete copy[key];
  return copy as T;
}
