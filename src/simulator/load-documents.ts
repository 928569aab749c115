import { DOCUMENT_EVENT_TYPES } from './dataset/constants.js';
import type { Actor } from './changes.js';
import type { SimDocument } from './documents.js';
import { HttpError } from './http-error.js';
import type { SimContext } from './sim-context.js';

/** Size of a document added without one: a few KiB, varying per load so checksums differ. */
const DEFAULT_BYTES = 3_000;

type LoadRecord = Record<string, unknown>;

function liveLoad(sim: SimContext, ref: string): { p: number; load: LoadRecord } {
  const p = sim.store.loadPositionByRef(ref);
  if (p === undefined) throw new HttpError(404, `load ${ref} not found`);
  const load = sim.store.loads.get(p) as LoadRecord;
  if (load['isDeleted'] === true) throw new HttpError(410, `load ${ref} has been removed`);
  return { p, load };
}

/**
 * Adds a document to a live load: its file on the storage origin, `{ type, url }` in the load's
 * `documents`, and the `document#*` event of its type (§6.3; POD → `document#pod_added`, BOL →
 * `document#bo_added`). Used by `POST /loads/document` and by tests (handle, admin).
 */
export function attachLoadDocument(sim: SimContext, ref: string, spec: { type: string; fileName: string; bytes?: number }, actor: Actor): SimDocument {
  const { p, load } = liveLoad(sim, ref);
  const ordinal = ((load['documents'] as unknown[] | undefined) ?? []).length + 1;
  const bytes = spec.bytes ?? DEFAULT_BYTES + ((p * 131 + ordinal * 17) % 2_000);
  const doc = sim.documents.add({ referenceNumber: ref, loadId: String(load['_id']), type: spec.type, fileName: spec.fileName, bytes, ordinal });
  sim.changes.addLoadDocument(p, spec.type, doc.url, DOCUMENT_EVENT_TYPES[spec.type], actor);
  return doc;
}

/**
 * Removes a document from its load, as a TMS user deleting it would: the load's `documents` loses
 * it (the load's updatedAt moves) and its URL answers 404. The spec has no event for this, so a
 * client learns it from the load.
 */
export function removeLoadDocument(sim: SimContext, ref: string, url: string, actor: Actor): void {
  const { p, load } = liveLoad(sim, ref);
  const documents = (load['documents'] as Array<{ url?: unknown }> | undefined) ?? [];
  const kept = documents.filter((d) => d.url !== url);
  if (kept.length === documents.length) throw new HttpError(404, `load ${ref} has no document ${url}`);
  sim.changes.updateLoad(p, { documents: kept }, actor);
  const doc = sim.documents.byUrl(url);
  if (doc) doc.removed = true;
}
