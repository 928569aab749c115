import pLimit from 'p-limit';
import type { RejectedItem } from '../../api/paging.js';
import type { KnownDocument } from '../../state/stores/document-file-store.js';
import type { SyncSideStore } from '../../state/stores/sync-side-store.js';
import type { RawRecord } from '../stream-definition.js';
import type { DocumentRef } from './document-ref.js';
import { storeDocument, type DocumentFilesContext } from './store-document.js';

/** What a load (or a listing of one type) now shows, against what was stored before. */
export interface DocumentObservation {
  referenceNumber: string;
  /** The documents it shows now; [] for a deleted load (every document gone). */
  current: readonly DocumentRef[];
  /** Only documents of this type are compared (a `document#*` event lists one type). */
  type?: string;
  /**
   * Server time of this view (the load version's updatedAt, or when the listing was read). A
   * stored document first seen after it is not in this view because the view is older: it is not
   * tombstoned from it. Null: the view is current (a deleted load).
   */
  asOf: string | null;
}

/** Records to deliver, records to quarantine, and the bookkeeping to commit with them. */
export interface DocumentChanges {
  records: RawRecord[];
  rejected: RejectedItem[];
  afterCommit: Array<(side: SyncSideStore) => Promise<void>>;
}

/**
 * Compares each observation with the documents stored before (`side.documents()`): a new
 * document is downloaded into the file store and delivered with its checksum; a stored one still
 * shown is delivered again as it was (same content hash: the engine drops it, no download); a
 * stored one no longer shown is delivered as a tombstone (`isDeleted: true`, its last record).
 * The stored set changes in the batch's commit, after every sink acknowledged.
 */
export async function documentChanges(ctx: DocumentFilesContext, side: SyncSideStore, observations: readonly DocumentObservation[], signal: AbortSignal): Promise<DocumentChanges> {
  const known = await side.documents().forLoads(observations.map((o) => o.referenceNumber));
  const kept = new Map<string, RawRecord>();
  const gone = new Map<string, RawRecord>();
  const wanted = new Map<string, { doc: DocumentRef; seenAt: string }>();
  for (const view of observations) {
    const before = (known.get(view.referenceNumber) ?? []).filter((k) => view.type === undefined || k.type === view.type);
    const now = new Set(view.current.map((d) => d.key));
    for (const stored of before) {
      if (now.has(stored.key)) kept.set(stored.key, stored.record);
      else if (view.asOf === null || view.asOf >= stored.seenAt) gone.set(stored.key, { ...stored.record, isDeleted: true });
    }
    const storedKeys = new Set(before.map((k) => k.key));
    for (const doc of view.current) {
      if (!storedKeys.has(doc.key)) wanted.set(doc.key, { doc, seenAt: view.asOf ?? '' });
    }
  }
  // A later view in the same batch may show again what an earlier one lacked.
  for (const key of [...gone.keys()]) if (kept.has(key) || wanted.has(key)) gone.delete(key);

  const limit = pLimit(ctx.options.parallelDownloads);
  const outcomes = await Promise.all([...wanted.values()].map(({ doc, seenAt }) => limit(async () => ({ doc, seenAt, outcome: await storeDocument(ctx, doc, signal) }))));
  const records: RawRecord[] = [...kept.values(), ...gone.values()];
  const rejected: RejectedItem[] = [];
  const remember: KnownDocument[] = [];
  for (const { doc, seenAt, outcome } of outcomes) {
    if (outcome.stored) {
      records.push(outcome.record);
      remember.push({ key: doc.key, referenceNumber: doc.referenceNumber, type: doc.type, record: outcome.record, seenAt });
    } else {
      rejected.push({ index: rejected.length, raw: outcome.record, problem: outcome.problem });
      ctx.logger.error({ document: doc.key, problem: outcome.problem }, 'document file not stored; its record is quarantined');
    }
  }
  const forget = [...gone.keys()];
  const afterCommit = remember.length + forget.length === 0 ? [] : [async (s: SyncSideStore) => {
    await s.documents().remember(remember);
    await s.documents().forget(forget);
  }];
  return { records, rejected, afterCommit };
}
