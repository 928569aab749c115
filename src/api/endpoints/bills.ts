import type { ApiClient } from '../api-client.js';
import type { Page } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import { billSchema, type Bill } from '../schemas/resources.js';
import { listCall } from './list-call.js';

/** Main: `GET /bills` (spec §4.3). No `sortBy`: page closed windows and check their stability. */
export type BillListQuery = QueryParams & {
  skip?: number;
  limit?: number;
  billNumber?: string | number;
  billId?: string;
  createdAtFrom?: string;
  createdAtTo?: string;
  updatedAtFrom?: string;
  updatedAtTo?: string;
};

export function listBills(client: ApiClient, query: BillListQuery, signal?: AbortSignal): Promise<Page<Bill>> {
  return listCall(client, '/bills', query, billSchema, { signal, variants: ['main'] });
}
