import { z } from 'zod';
import type { Chunk, RawRecord, StreamEnv } from '../stream-definition.js';

/**
 * Reference data without dates or paging (charge codes, load document types): the whole list
 * each run. Unchanged entries are dropped by the content-hash filter; entries that disappeared
 * since the last run are delivered as tombstones, so the ERP learns of removals too.
 */
export const snapshotCursorSchema = z.strictObject({ mode: z.literal('snapshot'), lastRunAt: z.string().nullable() });
export type SnapshotCursor = z.infer<typeof snapshotCursorSchema>;

/** Marker the runner recognises: a tombstone produced by the snapshot diff. */
export const REMOVED_MARKER = '__freightSyncRemoved';

export async function* readSnapshot(
  stream: string,
  fetchAll: (signal: AbortSignal) => Promise<{ items: RawRecord[]; rejected: Chunk<SnapshotCursor>['rejected'] }>,
  key: (record: RawRecord) => string,
  env: StreamEnv<unknown>,
  signal: AbortSignal,
): AsyncGenerator<Chunk<SnapshotCursor>> {
  const { items, rejected } = await fetchAll(signal);
  const present = new Set(items.map(key));
  const known = await env.side.seenKeys(stream);
  const removed: RawRecord[] = [];
  for (const [knownKey] of known) {
    if (!present.has(knownKey)) removed.push({ [REMOVED_MARKER]: true, key: knownKey });
  }
  const at = env.client.clock.now().toISOString();
  yield {
    records: [...items, ...removed],
    cursor: { mode: 'snapshot', lastRunAt: at },
    batchId: `snapshot_${at.slice(0, 10)}`,
    pages: 1,
    rejected,
  };
}
