import { z } from 'zod';
import { throwIfAborted } from '../util/abort.js';
import { FreightSyncError } from '../util/errors.js';
import type { SuccessEnvelope } from './schemas/envelope.js';
import { inApiOrder } from './api-order.js';
import { fastObjectParser } from './schemas/fast-object.js';

/** An element of a list answer that failed its resource schema; reported, never silently dropped. */
export interface RejectedItem {
  index: number;
  problem: string;
  raw: unknown;
}

export interface Page<T> {
  items: T[];
  rejected: RejectedItem[];
  /** Offset the page was requested at (offset paging). */
  skip?: number;
  /** `count` of the envelope where the endpoint has one (spec §2.1). */
  count?: number;
  /** Next page token (audits, spec §4.4), null/undefined on the last page. */
  nextPageToken?: string | null;
  envelope: SuccessEnvelope;
}

/** `data` of a list answer: an array of anything; each element is validated on its own. */
export const listDataSchema = z.array(z.unknown());

export function partitionItems<T>(items: unknown[], schema: z.ZodType<T>): { items: T[]; rejected: RejectedItem[] } {
  const valid: T[] = [];
  const rejected: RejectedItem[] = [];
  // Elements the fast path accepts come out as zod makes them (or as sent); the rest go through
  // zod. Either way they are handed on in the API's member order (api-order.ts).
  const fast = fastObjectParser(schema);
  items.forEach((raw, index) => {
    const quick = fast?.(raw);
    if (quick !== undefined) {
      valid.push(inApiOrder(quick as T, raw));
      return;
    }
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      valid.push(inApiOrder(parsed.data, raw));
    } else {
      const issue = parsed.error.issues[0];
      const path = issue?.path.length ? issue.path.join('.') : '(record)';
      rejected.push({ index, raw, problem: `${path}: ${issue?.message ?? 'invalid'}` });
    }
  });
  return { items: valid, rejected };
}

export class PagingError extends FreightSyncError {
  constructor(message: string) {
    super('API_PAGING', message);
  }
}

/**
 * Offset paging. With `count` (invoices, bills, customers, consignees, support moves) it stops
 * once `skip` reaches the count; without (`/loads`) it stops at the first short page. Either way
 * a short or empty page ends it, so a count that shrinks while paging cannot loop forever.
 */
export async function* offsetPages<T>(
  fetchPage: (skip: number, limit: number) => Promise<Page<T>>,
  options: { limit: number; startSkip?: number; signal?: AbortSignal; maxPages?: number },
): AsyncGenerator<Page<T>> {
  let skip = options.startSkip ?? 0;
  let pages = 0;
  for (;;) {
    throwIfAborted(options.signal);
    const page = await fetchPage(skip, options.limit);
    pages += 1;
    yield page;
    const received = page.items.length + page.rejected.length;
    skip += received;
    if (received < options.limit) return;
    if (page.count !== undefined && skip >= page.count) return;
    if (options.maxPages !== undefined && pages >= options.maxPages) return;
  }
}

/** `pageToken` paging (audits): follows `other.pageToken` until it is empty. */
export async function* tokenPages<T>(
  fetchPage: (pageToken: string | undefined) => Promise<Page<T>>,
  options: { signal?: AbortSignal; maxPages?: number } = {},
): AsyncGenerator<Page<T>> {
  let token: string | undefined;
  const seen = new Set<string>();
  let pages = 0;
  for (;;) {
    throwIfAborted(options.signal);
    const page = await fetchPage(token);
    pages += 1;
    yield page;
    const next = page.nextPageToken ?? undefined;
    if (!next || page.items.length + page.rejected.length === 0) return;
    if (seen.has(next)) throw new PagingError(`the server repeated pageToken after ${pages} pages; stopping to avoid a loop`);
    seen.add(next);
    token = next;
    if (options.maxPages !== undefined && pages >= options.maxPages) return;
  }
}
