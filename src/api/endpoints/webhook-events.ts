import type { ApiClient } from '../api-client.js';
import type { Page } from '../paging.js';
import type { QueryParams } from '../query-string.js';
import { webhookEventSchema, type WebhookEventRecord } from '../schemas/resources.js';
import { listCall, pathParam } from './list-call.js';

/** `GET /webhook/` (spec §4.6): the event log, inclusive `occurred_from`/`occurred_to`. */
export type WebhookEventQuery = QueryParams & {
  type?: string[];
  occurred_from?: string;
  occurred_to?: string;
  skip?: number;
  limit?: number;
  sortBy?: Record<string, 1 | -1>;
};

export function listWebhookEvents(client: ApiClient, query: WebhookEventQuery, signal?: AbortSignal): Promise<Page<WebhookEventRecord>> {
  const effective: QueryParams = client.variant === 'main' ? query : { ...query, skip: undefined, limit: undefined, sortBy: undefined };
  return listCall(client, '/webhook/', effective, webhookEventSchema, { signal });
}

export async function getWebhookEvent(client: ApiClient, id: string, signal?: AbortSignal): Promise<WebhookEventRecord> {
  const result = await client.call({
    method: 'GET',
    route: '/webhook/:id',
    path: `/webhook/${pathParam(id)}`,
    schema: webhookEventSchema,
    signal,
  });
  return result.data;
}
