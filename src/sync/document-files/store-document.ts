import type { ApiClient } from '../../api/api-client.js';
import { isDocumentDownloadError, isDocumentTooLarge, openDocument } from '../../api/document-download.js';
import type { FileStore } from '../../contracts/index.js';
import { sleep } from '../../util/abort.js';
import { backoffDelay } from '../../util/backoff.js';
import type { Logger } from '../../util/logger.js';
import type { RawRecord } from '../stream-definition.js';
import { extensionOf, type DocumentRef } from './document-ref.js';
import type { DocumentFilesOptions } from './options.js';

const MAX_RETRY_DELAY_MS = 30_000;

/** What storing documents needs. */
export interface DocumentFilesContext {
  client: ApiClient;
  files: FileStore;
  options: DocumentFilesOptions;
  logger: Logger;
}

/** The file is stored (its record), or it cannot be (why; the record is quarantined). */
export type StoreOutcome = { stored: true; record: RawRecord } | { stored: false; record: RawRecord; problem: string };

/** The record of a document before its file is known (also what a quarantined one holds). */
export function documentRecord(doc: DocumentRef): RawRecord {
  return { document_key: doc.key, reference_number: doc.referenceNumber, load_id: doc.loadId, type: doc.type, url: doc.url, isDeleted: false };
}

/**
 * Downloads one document's file straight into the file store (streamed: the bytes go from the
 * socket to the target's temp file) and returns its record with the checksum, size, name and
 * location. Transient failures (network, 5xx, 408, 429) are tried `downloadAttempts` times with
 * backoff, then thrown: the batch fails and its checkpoint stays, so the next run tries again.
 * A file over `maxBytes` or a permanent answer (403, 404, …) is not retried: the outcome names the
 * problem and the caller quarantines the record — never skipped in silence. Storage errors (a full
 * disk, SFTP down) are thrown at once.
 */
export async function storeDocument(ctx: DocumentFilesContext, doc: DocumentRef, signal: AbortSignal): Promise<StoreOutcome> {
  const base = documentRecord(doc);
  const { options } = ctx;
  for (let attempt = 0; ; attempt++) {
    let contentType: string | null = null;
    try {
      const stored = await ctx.files.put(
        {
          folder: options.folder,
          extension: extensionOf(doc.url),
          open: async (s) => {
            const opened = await openDocument(ctx.client, doc.url, { maxBytes: options.maxBytes, timeoutMs: options.downloadTimeout }, s);
            contentType = opened.contentType;
            return opened.body;
          },
        },
        signal,
      );
      return {
        stored: true,
        record: { ...base, file_name: stored.name, sha256: stored.sha256, bytes: stored.bytes, content_type: contentType, file_location: stored.location },
      };
    } catch (error) {
      if (signal.aborted) throw error;
      if (isDocumentTooLarge(error)) return { stored: false, record: base, problem: error.message };
      if (!isDocumentDownloadError(error)) throw error;
      if (!error.retryable) return { stored: false, record: base, problem: error.message };
      if (attempt + 1 >= options.downloadAttempts) throw error;
      const delayMs = backoffDelay({ attempt, baseMs: options.retryDelay, maxMs: MAX_RETRY_DELAY_MS });
      ctx.logger.warn({ document: doc.key, attempt: attempt + 1, delayMs, error: error.message }, 'document download failed; retrying');
      await sleep(delayMs, signal);
    }
  }
}
