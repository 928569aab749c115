/**
 * The one list of stream names, and the order a sync pass runs them in. Everything else is derived
 * from it: the `sync.streams` keys the config schema accepts (and the order it keeps them in), the
 * stream definitions (src/sync/streams/index.ts maps each name to its definition, in this order),
 * the resolved streams of the app, the default mappings, the CLI's `--stream` help.
 *
 * Why this order:
 * - `loads` first: a load read at status BILLING (or later) records an invoice candidate, which the
 *   `invoices` stream gap-fills in the same pass (design §2.4). Running invoices before loads
 *   would leave each new candidate for the next pass.
 * - `invoices` right after, so the gap-fill sees the candidates loads just wrote.
 * - then the other polled streams, whose relative order does not matter for correctness;
 * - push-only streams after them: they are fed by the webhook receiver (src/webhooks) and never polled;
 * - `documentFiles` last: downloading files is the slowest work of a pass, and nothing waits for it.
 *
 * Why here, in a module with no imports: config is a low layer (it reads the file; the app reads
 * it), and the stream definitions in src/sync are a layer above it. Sync may import this list;
 * config never imports sync (stream option schemas stay with the definitions and the app
 * validates `options` against them), so config ↔ sync cannot form a cycle again.
 */
export const STREAM_NAMES = [
  'loads',
  'invoices',
  'bills',
  'supportMoves',
  'loadAudits',
  'customerAudits',
  'customers',
  'consignees',
  'webhookEvents',
  'chargeCodes',
  'loadDocumentTypes',
  'customerDiscounts',
  'customerRates',
  'customerDynamicRates',
  'events',
  'loadDocuments',
  'documentFiles',
] as const;

export type StreamName = (typeof STREAM_NAMES)[number];

export function isStreamName(name: string): name is StreamName {
  return (STREAM_NAMES as readonly string[]).includes(name);
}
