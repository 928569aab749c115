import { z } from 'zod';
import type { ApiClient } from '../api-client.js';
import type { ListPeekHandler } from '../list-peek.js';
import { partitionItems, type Page, type RejectedItem } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import { unwrapNestedData } from '../schemas/envelope.js';
import {
  auditRecordSchema,
  customerDiscountSchema,
  customerRateSchema,
  customerSchema,
  dynamicRateRuleSchema,
  dynamicRatesSchema,
  uploadedDocumentSchema,
  type AuditRecord,
  type Customer,
  type CustomerDiscount,
  type CustomerRate,
  type DynamicRateRule,
  type DynamicRates,
  type UploadedDocument,
} from '../schemas/resources.js';
import type { AuditQuery } from './loads.js';
import { listCall, pathParam } from './list-call.js';

/** `GET /customer/` query (spec §4.7). */
export type CustomerListQuery = QueryParams & {
  skip?: number;
  limit?: number;
  searchTerm?: string;
  customerType?: string[];
  sortBy?: Record<string, 1 | -1>;
  isIncludeDeleted?: boolean;
  isGetAll?: boolean;
  updatedAtFrom?: string;
  updatedAtTo?: string;
  updatedFrom?: string;
  updatedTo?: string;
};

export function listCustomers(client: ApiClient, query: CustomerListQuery, signal?: AbortSignal, peek?: ListPeekHandler): Promise<Page<Customer>> {
  return listCall(client, '/customer/', query, customerSchema, { signal, ...(peek ? { peek } : {}) });
}

export async function getCustomer(client: ApiClient, id: string, signal?: AbortSignal): Promise<Customer> {
  const result = await client.call({
    method: 'GET',
    route: '/customer/:id',
    path: `/customer/${pathParam(id)}`,
    schema: z.unknown().transform(unwrapNestedData).pipe(customerSchema),
    signal,
  });
  return result.data;
}

/** Create answers nest `{statusCode, message, data}`; the created record may sit under `user.customer`. */
const createdCustomerSchema = z
  .unknown()
  .transform(unwrapNestedData)
  .transform((value) => {
    if (value && typeof value === 'object' && 'user' in value) {
      const user = (value as { user?: { customer?: unknown } }).user;
      if (user && typeof user === 'object' && user.customer) return user.customer;
    }
    return value;
  })
  .pipe(customerSchema);

export async function createCustomer(client: ApiClient, body: Record<string, unknown>, signal?: AbortSignal): Promise<Customer> {
  const result = await client.call({ method: 'POST', route: '/customer', body, schema: createdCustomerSchema, signal });
  return result.data;
}

export async function updateCustomer(
  client: ApiClient,
  id: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Customer> {
  const result = await client.call({
    method: 'PUT',
    route: '/customer/:id',
    path: `/customer/${pathParam(id)}`,
    body,
    schema: createdCustomerSchema,
    signal,
  });
  return result.data;
}

/** `DELETE /customer/<id>`: `data.data.success` (spec §2.1). */
export async function deleteCustomer(client: ApiClient, id: string, signal?: AbortSignal): Promise<boolean> {
  const result = await client.call({
    method: 'DELETE',
    route: '/customer/:id',
    path: `/customer/${pathParam(id)}`,
    schema: z.unknown().transform(unwrapNestedData),
    signal,
  });
  const inner = result.data as { success?: unknown } | undefined;
  return inner?.success === true;
}

export async function uploadCustomerDocument(
  client: ApiClient,
  upload: { customerId: string; documentType: string; fileName: string; content: Uint8Array; contentType?: string },
  signal?: AbortSignal,
): Promise<UploadedDocument> {
  const form = new FormData();
  form.append('customerId', upload.customerId);
  form.append('documentType', upload.documentType);
  form.append('file', new Blob([upload.content], { type: upload.contentType ?? 'application/octet-stream' }), upload.fileName);
  const result = await client.call({ method: 'POST', route: '/customer/document', body: form, schema: uploadedDocumentSchema, signal });
  return result.data;
}

/** `GET /customer-discount` query (spec §4.7); the answer is not paged. */
export type CustomerDiscountQuery = QueryParams & { searchText?: string; caller?: string[]; consignee?: string[]; shipper?: string[]; carrierId?: string };

export function listCustomerDiscounts(client: ApiClient, query: CustomerDiscountQuery, signal?: AbortSignal): Promise<Page<CustomerDiscount>> {
  return listCall(client, '/customer-discount', query, customerDiscountSchema, { signal });
}

/** `GET /customer-rates` query (spec §4.7): skip/limit paged (§8 bounds), no `count`. */
export type CustomerRateQuery = QueryParams & { skip?: number; limit?: number; searchText?: string; caller?: string[]; consignee?: string[]; shipper?: string[] };

export function listCustomerRates(client: ApiClient, query: CustomerRateQuery, signal?: AbortSignal): Promise<Page<CustomerRate>> {
  return listCall(client, '/customer-rates', query, customerRateSchema, { signal });
}

/** The dynamic rates record without its rules, and the rules validated one by one. */
export interface DynamicRatesAnswer {
  header: Omit<NonNullable<DynamicRates>, 'rules'> | null;
  rules: DynamicRateRule[];
  rejected: RejectedItem[];
}

/** `GET /customer-dynamic-rates`: one record per account (spec §4.7); a rule that fails its schema is reported, not fatal. */
export async function getCustomerDynamicRates(client: ApiClient, signal?: AbortSignal): Promise<DynamicRatesAnswer> {
  const result = await client.call({ method: 'GET', route: '/customer-dynamic-rates', schema: dynamicRatesSchema, signal });
  if (!result.data) return { header: null, rules: [], rejected: [] };
  const { rules, ...header } = result.data;
  const { items, rejected } = partitionItems(rules ?? [], dynamicRateRuleSchema);
  return { header, rules: items, rejected };
}

/** Main: `GET /audit/customer`, paged by `pageToken`. */
export function listCustomerAudits(client: ApiClient, query: AuditQuery, signal?: AbortSignal): Promise<Page<AuditRecord>> {
  return listCall(client, '/audit/customer', query, auditRecordSchema, { signal, variants: ['main'] });
}
