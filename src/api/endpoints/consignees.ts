import type { ApiClient } from '../api-client.js';
import type { ListPeekHandler } from '../list-peek.js';
import type { Page } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import { customerSchema, type Customer } from '../schemas/resources.js';
import { listCall } from './list-call.js';

/** `GET /consignee/` (spec §4.8): customer-shaped records. */
export type ConsigneeListQuery = QueryParams & {
  skip?: number;
  limit?: number;
  sortBy?: Record<string, 1 | -1>;
  updatedAtFrom?: string;
  updatedAtTo?: string;
  updatedFrom?: string;
  updatedTo?: string;
};

export function listConsignees(client: ApiClient, query: ConsigneeListQuery, signal?: AbortSignal, peek?: ListPeekHandler): Promise<Page<Customer>> {
  return listCall(client, '/consignee/', query, customerSchema, { signal, ...(peek ? { peek } : {}) });
}
