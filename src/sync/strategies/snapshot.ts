import { z } from 'zod';
import type { RejectedItem } from '../../api/paging.js';
import { contentHash } from '../content-hash.js';
import type { Chunk, RawRecord, StreamEnv } from '../stream-definition.js';

/**
 * Reference data without dates (charge codes, load document types, customer discounts, rates and
 * dynamic rates): the whole list each run. Unchanged entries are dropped by the content-hash
 * filter; entries that disappeared since the last run are delivered as tombstones, so the ERP
 * learns of removals too.
 */
export const snapshotCursorSchema = z.strictObject({ mode: z.literal('snapshot'), lastRunAt: z.string().nullable() });
export type SnapshotCursor = z.infer<typeof snapshotCursorSchema>;

/** Marker the runner recognises: a tombstone produced by the snapshot diff. */
export const REMOVED_MARKER = '__freightSyncRemoved';

/** One read of the whole list. */
export interface SnapshotRead {
  items: RawRecord[];
  rejected: RejectedItem[];
  /**
   * API pages the read took (default 1). A read of several offset pages is not atomic: an entry
   * removed from an earlier page while the later ones are read shifts the rest forward, and one
   * entry is then skipped — absent from this read although it still exists.
   */
  pages?: number;
  /**
   * True when the read proves no entry slid past a page boundary while it was paged
   * (overlapped-list.ts): an entry missing from it is gone, no second read needed.
   */
  consistent?: boolean;
}

/** Reads of a paged list it takes at most to find two in a row that agree (see `confirmedRead`). */
const MAX_READS = 4;

const tombstoneOf = (key: string): RawRecord => ({ [REMOVED_MARKER]: true, key });

export async function* readSnapshot(
  stream: string,
  fetchAll: (signal: AbortSignal) => Promise<SnapshotRead>,
  key: (record: RawRecord) => string,
  env: StreamEnv<unknown>,
  signal: AbortSignal,
): AsyncGenerator<Chunk<SnapshotCursor>> {
  const known = await env.side.seenKeys(stream);
  // Keys delivered and not tombstoned yet: the ones a removal could concern. A key already
  // tombstoned stays absent quietly (its tombstone would be filtered as unchanged anyway).
  const live = [...known].filter(([k, hash]) => hash !== contentHash('delete', tombstoneOf(k))).map(([k]) => k);
  let read = await fetchAll(signal);
  let pages = read.pages ?? 1;
  let gone = live.filter((k) => !presentKeys(read, key).has(k));
  if (gone.length > 0 && pages > 1 && read.consistent !== true) {
    const confirmed = await confirmedRead(read, fetchAll, key, signal);
    read = confirmed.read;
    pages += confirmed.pages;
    gone = confirmed.stable ? live.filter((k) => !presentKeys(read, key).has(k)) : [];
    if (!confirmed.stable) {
      env.logger.warn({ stream, reads: MAX_READS }, `stream ${stream}: the list kept changing while it was paged; removals are left for the next run`);
    }
  }
  const at = env.client.clock.now().toISOString();
  yield {
    records: [...read.items, ...gone.map(tombstoneOf)],
    cursor: { mode: 'snapshot', lastRunAt: at },
    batchId: `snapshot_${at.slice(0, 10)}`,
    pages,
    rejected: read.rejected,
  };
}

/**
 * Keys a read holds, counting elements that failed their schema but still carry a key: an entry
 * that is there, only malformed, must not be tombstoned.
 */
function presentKeys(read: SnapshotRead, key: (record: RawRecord) => string): Set<string> {
  const keys = new Set(read.items.map(key));
  for (const item of read.rejected) {
    if (!item.raw || typeof item.raw !== 'object') continue;
    try {
      keys.add(key(item.raw as RawRecord));
    } catch {
      // no key: it cannot be one of the known entries either
    }
  }
  return keys;
}

/**
 * A paged read that misses known entries, and does not prove itself consistent, is read again
 * until two reads in a row hold the same keys (or one proves itself), so a removal is believed
 * only from a list that did not shift while it was paged. This costs extra reads only in a run
 * that would tombstone something.
 */
async function confirmedRead(
  first: SnapshotRead,
  fetchAll: (signal: AbortSignal) => Promise<SnapshotRead>,
  key: (record: RawRecord) => string,
  signal: AbortSignal,
): Promise<{ read: SnapshotRead; pages: number; stable: boolean }> {
  let previous = first;
  let pages = 0;
  for (let reads = 1; reads < MAX_READS; reads++) {
    const next = await fetchAll(signal);
    pages += next.pages ?? 1;
    if (next.consistent === true || sameKeys(presentKeys(previous, key), presentKeys(next, key))) return { read: next, pages, stable: true };
    previous = next;
  }
  return { read: previous, pages, stable: false };
}

function sameKeys(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const k of a) if (!b.has(k)) return false;
  return true;
}
