import type { z } from 'zod';
import type { ApiClient } from '../api-client.js';
import type { ListPeekHandler } from '../list-peek.js';
import { listDataSchema, partitionItems, type Page } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import type { ApiVariant } from '../variant.js';

/** One GET of a list endpoint, its elements validated one by one. */
export async function listCall<T>(
  client: ApiClient,
  route: string,
  query: QueryParams,
  itemSchema: z.ZodType<T>,
  options: { signal?: AbortSignal; variants?: readonly ApiVariant[]; peek?: ListPeekHandler } = {},
): Promise<Page<T>> {
  const result = await client.call({
    method: 'GET',
    route,
    query,
    schema: listDataSchema,
    signal: options.signal,
    variants: options.variants,
    ...(options.peek ? { peek: options.peek } : {}),
  });
  const { items, rejected } = partitionItems(result.data, itemSchema);
  return {
    items,
    rejected,
    skip: typeof query.skip === 'number' ? query.skip : undefined,
    count: result.envelope.count ?? undefined,
    nextPageToken: result.envelope.other?.pageToken ?? null,
    // The rest of the envelope (count, pageToken); its `data` are the items above, not referenced
    // twice: a page's reader lets go of them once handed over (sync/strategies/keyset.ts).
    envelope: { ...result.envelope, data: undefined },
  };
}

/** Path parameters are encoded: reference numbers may contain `/`. */
export function pathParam(value: string): string {
  return encodeURIComponent(value);
}
