import { pushOnlyStream } from './push-only.js';

/**
 * Load documents announced by `document#*` events, as read back from
 * `GET /load-document/?reference_number=&doc_type=` (§4.4): one record per document
 * `{ reference_number, load_id, type, url }`, keyed `reference_number|type|url`. The list endpoint
 * needs both parameters, so documents cannot be polled in bulk; the polled representation stays
 * the `documents` array of the load (loads stream). No timestamps in the record, so reading the
 * same document again is dropped by the content hash instead of producing a second row.
 */
export const loadDocumentsStream = pushOnlyStream({
  name: 'loadDocuments',
  description: 'Load documents from document#* webhook events (push only; GET /load-document/)',
  keyFields: ['document_key'],
  updatedAtFields: [],
});
