import { describe, expect, it } from 'vitest';
import type { RecordBatch } from '../../src/contracts/index.js';
import { createStores } from '../../src/state/stores/index.js';
import { runStream, type StreamRunDeps } from '../../src/sync/stream-runner.js';
import type { AnyStreamDefinition, RawRecord } from '../../src/sync/stream-definition.js';
import { streamByName } from '../../src/sync/streams/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { freshStateDatabase } from '../helpers/state-db.js';
import { plan } from '../helpers/strategy-fakes.js';

/** A load as the engine needs it: a key and an updatedAt. */
function load(id: string): RawRecord {
  return { _id: id, reference_number: `R-${id}`, updated_at: '2024-03-01T10:00:00.000Z' };
}

describe("the engine lets go of a delivered chunk's records (Chunk.recordsReleasable)", () => {
  it('empties a releasable array once delivered and committed, and leaves any other array as it was', async () => {
    const { db } = await freshStateDatabase();
    const stores = createStores(db);
    const deps = { stores, client: { stats: { requests: 0 }, variant: 'main' }, logger: silentLogger() } as unknown as StreamRunDeps;
    const real = streamByName('loads');
    const releasable = [load('a'), load('b')];
    const kept = [load('c')];
    const seenBySink: number[] = [];
    const definition = {
      ...real,
      dependsOnCommits: true,
      read: async function* () {
        const cursor = real.resetCursor('main', '2024-03-01T00:00:00.000Z');
        yield { records: releasable, cursor, batchId: 'one', pages: 1, rejected: [], recordsReleasable: true };
        // The first chunk was delivered before this one is asked for.
        expect(releasable).toHaveLength(0);
        yield { records: kept, cursor, batchId: 'two', pages: 1, rejected: [] };
      },
    } as AnyStreamDefinition;
    try {
      const summary = await runStream(deps, {
        definition,
        sinks: [{ name: 'memory', sink: { write: async (batch: RecordBatch) => void seenBySink.push(batch.records.length) } }],
        pageSize: 50,
        options: {},
        plan: plan(),
        command: 'sync',
        signal: new AbortController().signal,
      });
      expect(summary).toMatchObject({ status: 'ok', delivered: 3 });
      expect(seenBySink).toEqual([2, 1]);
      expect(releasable).toHaveLength(0);
      expect(kept).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  });
});
