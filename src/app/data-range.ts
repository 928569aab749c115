import type { ApiClient } from '../api/api-client.js';
import { listLoads } from '../api/endpoints/loads.js';

/** Where the account's loads lie in time, for the hint after an empty backfill. */
export interface DataRange {
  field: 'updatedAt' | 'createdAt';
  earliest: string | null;
  latest: string | null;
}

/**
 * Two one-record calls: the oldest and newest load. Main sorts by updatedAt (what backfill
 * selects on); brokerage sorts by createdAt only (spec §4.4.3), so its range is by creation.
 */
export async function loadsDataRange(client: ApiClient, signal?: AbortSignal): Promise<DataRange> {
  const main = client.variant === 'main';
  const field = main ? 'updatedAt' : 'createdAt';
  const first = await listLoads(client, { skip: 0, limit: 1, sortBy: main ? { updatedAt: 1 } : 'asc' }, signal);
  const last = await listLoads(client, { skip: 0, limit: 1, sortBy: main ? { updatedAt: -1 } : 'desc' }, signal);
  const at = (load: Record<string, unknown> | undefined) => {
    const value = load?.[field];
    return typeof value === 'string' ? value : null;
  };
  return { field, earliest: at(first.items[0] as Record<string, unknown> | undefined), latest: at(last.items[0] as Record<string, unknown> | undefined) };
}
