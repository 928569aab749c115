import type { RawRecord } from '../stream-definition.js';

/** One document of a load as the API lists it (spec §2.7: `{ type, url }`), with its load. */
export interface DocumentRef {
  key: string;
  referenceNumber: string;
  loadId: string | null;
  type: string;
  url: string;
}

/**
 * The record key of a document: `<reference_number>|<type>|<url>`, as the `loadDocuments` stream
 * keys it. A document's URL does not change while it exists, so the key is stable; the file's
 * content address (sha256) is a field, not the key, because two documents may share bytes.
 */
export function documentKey(referenceNumber: string, type: string, url: string): string {
  return `${referenceNumber}|${type}|${url}`;
}

export function documentRef(referenceNumber: string, loadId: string | null, doc: { type: string; url: string }): DocumentRef {
  return { key: documentKey(referenceNumber, doc.type, doc.url), referenceNumber, loadId, type: doc.type, url: doc.url };
}

/**
 * The documents a load lists, or null when the record has no `documents` array (a shape without
 * it says nothing about documents, so nothing may be tombstoned from it). Entries without a
 * string `type` and `url` are not documents.
 */
export function documentsOfLoad(load: RawRecord): DocumentRef[] | null {
  const ref = typeof load.reference_number === 'string' ? load.reference_number : null;
  if (ref === null || !Array.isArray(load.documents)) return null;
  const loadId = typeof load._id === 'string' ? load._id : null;
  const refs = new Map<string, DocumentRef>();
  for (const entry of load.documents as unknown[]) {
    const doc = entry as { type?: unknown; url?: unknown } | null;
    if (doc && typeof doc.type === 'string' && typeof doc.url === 'string' && doc.url !== '') refs.set(documentKey(ref, doc.type, doc.url), documentRef(ref, loadId, { type: doc.type, url: doc.url }));
  }
  return [...refs.values()];
}

/** `.pdf` from the URL's last path segment, '' when it has no plain extension. */
export function extensionOf(url: string): string {
  try {
    const last = new URL(url).pathname.split('/').pop() ?? '';
    const match = /\.([A-Za-z0-9]{1,10})$/.exec(decodeURIComponent(last));
    return match ? `.${match[1]!.toLowerCase()}` : '';
  } catch {
    return '';
  }
}
