import type { ApiClient } from './api-client.js';
import { listLoadDocumentTypes } from './endpoints/loads.js';

/**
 * Makes sure the client has seen the server's clock before a time is computed from it. A token
 * loaded from the state database needs no request, so without this a fresh process (a replica
 * that just took an account's lease over) would take the LOCAL clock for the server's — wrong by
 * the skew: a sync window would end past the server's now, and the webhook catch-up would record
 * the event log as read up to a time the server had not reached (cluster chaos, long form: a
 * brokerage server 120 s behind, events lost). The document-type list is the cheapest
 * authenticated call both variants have.
 */
export async function ensureServerClock(client: ApiClient, signal: AbortSignal): Promise<void> {
  if (client.clock.known) return;
  await listLoadDocumentTypes(client, signal);
}
