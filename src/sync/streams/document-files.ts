import type { StreamDefinition, StreamEnv, RawRecord } from '../stream-definition.js';
import { loadPagesCursorAt, loadPagesCursorSchema, readLoadPages, type LoadPagesCursor } from '../strategies/load-pages.js';
import { documentChanges, type DocumentObservation } from '../document-files/document-changes.js';
import { documentsOfLoad } from '../document-files/document-ref.js';
import { documentFilesOptionsSchema, type DocumentFilesOptions } from '../document-files/options.js';
import type { DocumentFilesContext } from '../document-files/store-document.js';
import { deletedFlagOp, requireKey } from './common.js';

/** Server time as ISO (`Date.toISOString`), so views and stored documents compare as text. */
function isoOrNull(value: unknown): string | null {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** What a load version shows of its documents; null when it says nothing about them. */
export function observeLoad(load: RawRecord): DocumentObservation | null {
  const ref = typeof load.reference_number === 'string' ? load.reference_number : null;
  if (ref === null) return null;
  if (load.isDeleted === true) return { referenceNumber: ref, current: [], asOf: null };
  const current = documentsOfLoad(load);
  return current === null ? null : { referenceNumber: ref, current, asOf: isoOrNull(load.updatedAt) ?? '' };
}

export function documentFilesContext(env: Pick<StreamEnv<DocumentFilesOptions>, 'client' | 'files' | 'options' | 'logger'>): DocumentFilesContext {
  if (!env.files) throw new Error('documentFiles: no file store; sync.streams.documentFiles.options.filesTo must name a csv or sftp connector');
  return { client: env.client, files: env.files, options: env.options, logger: env.logger };
}

/**
 * The files behind load documents (spec §2.7), stored in the file store of the connector named by
 * `options.filesTo` under content-addressed names, one record per document with its checksum,
 * size and location; a document that leaves its load (or whose load is deleted) becomes a
 * tombstone. Polled through its own read of the loads change feed (the loads' `documents`
 * arrays; its own cursor, so it does not depend on the `loads` stream), and fed by `document#*`
 * events through the webhook processor (src/webhooks). Not read ahead: a chunk's comparison reads
 * the stored documents the previous chunk's commit writes.
 */
export const documentFilesStream: StreamDefinition<LoadPagesCursor, DocumentFilesOptions> = {
  name: 'documentFiles',
  description: 'Files behind load documents, stored content-addressed (GET /loads documents; document#* events)',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'loads',
  optionsSchema: documentFilesOptionsSchema,
  cursorSchema: loadPagesCursorSchema,
  cursorKind: 'updatedAt keyset (main), day windows (brokerage)',
  dependsOnCommits: true,
  keyDescription: 'document_key (reference_number|type|url)',
  key: (record) => requireKey('documentFiles', record, 'document_key'),
  op: deletedFlagOp,
  // A document has no time of its own; the load's would re-deliver unchanged documents.
  updatedAt: () => null,
  resetCursor: (variant, at) => loadPagesCursorAt(variant, at),
  async *read(env, cursor, plan, signal) {
    const ctx = documentFilesContext(env);
    for await (const chunk of readLoadPages('documentFiles', env, cursor, plan, signal)) {
      const observations = chunk.records.map(observeLoad).filter((o): o is DocumentObservation => o !== null);
      const changes = await documentChanges(ctx, env.side, observations, signal);
      yield {
        ...chunk,
        records: changes.records,
        // Loads that failed their schema stay quarantined under this stream too: their documents were not looked at.
        rejected: [...chunk.rejected, ...changes.rejected],
        afterCommit: changes.afterCommit,
      };
    }
  },
};
