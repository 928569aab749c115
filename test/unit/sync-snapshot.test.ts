import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/sync/content-hash.js';
import type { RawRecord, StreamEnv } from '../../src/sync/stream-definition.js';
import { readSnapshot, REMOVED_MARKER, type SnapshotRead } from '../../src/sync/strategies/snapshot.js';
import { collect, snapshotEnv } from '../helpers/strategy-fakes.js';

/**
 * The snapshot diff (src/sync/strategies/snapshot.ts): what disappeared becomes a tombstone, but a
 * list read in offset pages may miss an entry that still exists (one before it was removed while
 * paging), so such a removal needs two reads in a row that agree.
 */
const key = (record: RawRecord) => String(record._id);
const entries = (...ids: string[]): RawRecord[] => ids.map((_id) => ({ _id }));
const tombstone = (k: string) => ({ [REMOVED_MARKER]: true, key: k });

/** Known keys as the seen-records table holds them: delivered versions, or delivered tombstones. */
function knownEnv(known: Record<string, 'live' | 'tombstoned'>): StreamEnv<unknown> {
  return snapshotEnv(new Map(Object.entries(known).map(([k, state]) => [k, state === 'live' ? 'some-hash' : contentHash('delete', tombstone(k))])));
}

/** A fake list endpoint answering the given reads in turn. */
function reads(...answers: SnapshotRead[]): { fetchAll: () => Promise<SnapshotRead>; calls: () => number } {
  let calls = 0;
  return {
    fetchAll: async () => answers[Math.min(calls++, answers.length - 1)]!,
    calls: () => calls,
  };
}

async function run(known: Record<string, 'live' | 'tombstoned'>, fake: ReturnType<typeof reads>) {
  const chunks = await collect(readSnapshot('test', fake.fetchAll, key, knownEnv(known), new AbortController().signal));
  expect(chunks).toHaveLength(1);
  return chunks[0]!;
}

describe('readSnapshot', () => {
  it('tombstones an entry missing from a one-answer list at once', async () => {
    const fake = reads({ items: entries('a', 'c'), rejected: [] });
    const chunk = await run({ a: 'live', b: 'live', c: 'live' }, fake);
    expect(chunk.records).toEqual([...entries('a', 'c'), tombstone('b')]);
    expect(fake.calls()).toBe(1);
  });

  it('does not tombstone an entry a paged read skipped, when the next read has it', async () => {
    // First read: `b` was skipped (an entry before it vanished mid-paging, shifting the pages).
    const fake = reads({ items: entries('a', 'c'), rejected: [], pages: 2 }, { items: entries('a', 'b', 'c'), rejected: [], pages: 2 }, { items: entries('a', 'b', 'c'), rejected: [], pages: 2 });
    const chunk = await run({ a: 'live', b: 'live', c: 'live' }, fake);
    expect(chunk.records).toEqual(entries('a', 'b', 'c'));
    expect(chunk.pages).toBe(6);
  });

  it('tombstones what two paged reads in a row agree is gone', async () => {
    const fake = reads({ items: entries('a', 'c'), rejected: [], pages: 2 }, { items: entries('a', 'c'), rejected: [], pages: 2 });
    const chunk = await run({ a: 'live', b: 'live', c: 'live' }, fake);
    expect(chunk.records).toEqual([...entries('a', 'c'), tombstone('b')]);
    expect(chunk.pages).toBe(4);
  });

  it('leaves removals for the next run while the paged list keeps changing, delivering the entries read', async () => {
    const fake = reads(
      { items: entries('a'), rejected: [], pages: 2 },
      { items: entries('a', 'b'), rejected: [], pages: 2 },
      { items: entries('a', 'c'), rejected: [], pages: 2 },
      { items: entries('a', 'b', 'c'), rejected: [], pages: 2 },
    );
    const chunk = await run({ a: 'live', b: 'live', c: 'live' }, fake);
    expect(chunk.records.filter((r) => r[REMOVED_MARKER] === true)).toEqual([]);
    expect(chunk.records).toEqual(entries('a', 'b', 'c'));
    expect(fake.calls()).toBe(4);
  });

  it('costs no confirming read for entries already tombstoned', async () => {
    const fake = reads({ items: entries('a'), rejected: [], pages: 3 });
    const chunk = await run({ a: 'live', b: 'tombstoned' }, fake);
    expect(chunk.records).toEqual(entries('a'));
    expect(fake.calls()).toBe(1);
  });

  it('does not tombstone an entry that is listed but failed its schema', async () => {
    const fake = reads({ items: entries('a'), rejected: [{ index: 1, problem: 'updatedAt: expected an ISO 8601 date-time', raw: { _id: 'b', updatedAt: 'soon' } }] });
    const chunk = await run({ a: 'live', b: 'live' }, fake);
    expect(chunk.records).toEqual(entries('a'));
    expect(chunk.rejected).toHaveLength(1);
  });
});
