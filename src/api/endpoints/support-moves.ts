import type { ApiClient } from '../api-client.js';
import type { Page } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import { supportMoveSchema, type SupportMove } from '../schemas/resources.js';
import { listCall } from './list-call.js';

/** Main: `GET /support-move` (spec §4.5). No `sortBy`. */
export type SupportMoveListQuery = QueryParams & {
  skip?: number;
  limit?: number;
  referenceNumbers?: string[];
  supportMoveNumbers?: string[];
  loadIds?: string[];
  moveIds?: string[];
  driverIds?: string[];
  branchIds?: string[];
  includeDriverPay?: boolean;
  createdAtFrom?: string;
  createdAtTo?: string;
  updatedAtFrom?: string;
  updatedAtTo?: string;
};

export function listSupportMoves(client: ApiClient, query: SupportMoveListQuery, signal?: AbortSignal): Promise<Page<SupportMove>> {
  return listCall(client, '/support-move', query, supportMoveSchema, { signal, variants: ['main'] });
}
