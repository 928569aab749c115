import type { ApiClient } from '../api/api-client.js';
import { listLoadDocuments, listLoads, type LoadListQuery } from '../api/endpoints/loads.js';
import type { OutboundConfig } from '../config/types.js';

/** A load found by the identifiers a create carried into it. */
export interface FoundLoad {
  referenceNumber: string;
  loadId: string | null;
  /** Deleted at the API since it was created (by someone else): created all the same. */
  deleted?: true;
}

export type LookupOutcome = { found: FoundLoad; matches: number } | { found: null };

/** Pages the search at most this far: a reconcile key matching more loads is not selective. */
export const MAX_PAGES = 20;
export const PAGE = 50;

/** Tolerance for clock differences between `sent_at` (server clock) and the load's createdAt. */
export const CREATED_AT_SLACK_MS = 5 * 60_000;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function callerId(load: Record<string, unknown>): string | undefined {
  const caller = load['caller'];
  if (typeof caller === 'string') return caller;
  if (caller && typeof caller === 'object') return text((caller as Record<string, unknown>)['_id']);
  return undefined;
}

/** Which identifiers a create body is looked up by, for messages and for the search. */
export function reconcileKey(body: Record<string, unknown>, by: OutboundConfig['reconcileBy']): { field: 'secondaryReferenceNo' | 'containerNo'; value: string } | undefined {
  const field = by === 'containerNo+caller' ? 'containerNo' : 'secondaryReferenceNo';
  const value = text(body[field]);
  return value ? { field, value } : undefined;
}

/**
 * Looks up the load an ambiguous `POST /loads` may have created (design §3), by the identifiers
 * the create carried: `secondaryReferenceNo` (searched with `searchTerm`, which matches
 * substrings and other fields, so every record is compared exactly) or `containerNo` + caller.
 * The caller must match too, and the load must not predate the first send (minus slack), so a
 * look-alike load created by someone else earlier is not taken for ours. Deleted loads are
 * searched too: a load our create made and a dispatcher deleted before this look-up was still
 * created, and sending the create again would bring back a load someone removed (10-account chaos
 * run 5: the simulator's mutator deleted a fresh create before the next holder looked it up).
 */
export async function findCreatedLoad(
  client: ApiClient,
  body: Record<string, unknown>,
  by: OutboundConfig['reconcileBy'],
  sentAt: string | null,
  signal: AbortSignal,
): Promise<LookupOutcome> {
  const key = reconcileKey(body, by);
  if (!key) throw new Error(`cannot reconcile: the create carries no ${by === 'containerNo+caller' ? 'containerNo' : 'secondaryReferenceNo'}`);
  const caller = text(body['caller']);
  const notBefore = sentAt ? Date.parse(sentAt) - CREATED_AT_SLACK_MS : Number.NEGATIVE_INFINITY;
  const matches: FoundLoad[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const query: LoadListQuery = { skip: page * PAGE, limit: PAGE, isIncludeDeleted: true };
    if (key.field === 'containerNo') {
      query.containerNo = key.value;
      if (caller) query.caller = [caller];
    } else {
      query.searchTerm = key.value;
    }
    const result = await listLoads(client, query, signal);
    for (const load of result.items as Array<Record<string, unknown>>) {
      if (load[key.field] !== key.value) continue;
      if (caller && callerId(load) !== undefined && callerId(load) !== caller) continue;
      const createdAt = text(load['createdAt']);
      if (createdAt && Date.parse(createdAt) < notBefore) continue;
      const referenceNumber = text(load['reference_number']);
      if (referenceNumber) matches.push({ referenceNumber, loadId: text(load['_id']) ?? null, ...(load['isDeleted'] === true ? { deleted: true as const } : {}) });
    }
    if (result.items.length + result.rejected.length < PAGE) break;
  }
  // Oldest first would need createdAt; the API lists newest first, so the last match is the first created.
  const first = matches.at(-1);
  return first ? { found: first, matches: matches.length } : { found: null };
}

/**
 * Whether an ambiguous document upload landed: a document of the type whose URL carries the file
 * name, or more documents of the type than before the first attempt.
 */
export async function findUploadedDocument(
  client: ApiClient,
  referenceNumber: string,
  documentType: string,
  fileName: string,
  countBefore: number | undefined,
  signal: AbortSignal,
): Promise<string | null> {
  const documents = await listLoadDocuments(client, referenceNumber, documentType, signal);
  const encoded = encodeURIComponent(fileName);
  const named = documents.find((d) => typeof d.url === 'string' && (d.url.includes(encoded) || d.url.includes(fileName)));
  if (named) return named.url ?? null;
  if (countBefore !== undefined && documents.length > countBefore) return documents.at(-1)?.url ?? null;
  return null;
}
