import { mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { csvOptionsSchema, type CsvOptionsInput } from '../../connectors/csv/index.js';
import { FileDropSink } from '../../connectors/file-drop/drop-sink.js';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import type { FileEntry } from '../../connectors/file-drop/file-target.js';
import { silentLogger } from '../../src/util/logger.js';
import { mappersOf, thingsMapping } from '../helpers/mappers.js';
import { batchOf, record } from '../helpers/records.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'drop-listing-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A local folder that records which directories were listed with `list` (a stat per entry). */
class CountingTarget extends LocalTarget {
  readonly listed: string[] = [];
  override async list(dir: string): Promise<FileEntry[]> {
    this.listed.push(dir);
    return super.list(dir);
  }
}

function sinkIn(name: string, options: Partial<CsvOptionsInput>, clock: { ms: number }) {
  const out = path.join(root, name);
  const target = new CountingTarget();
  const sink = new FileDropSink({
    target,
    directory: out,
    options: csvOptionsSchema.parse({ directory: out, ...options }),
    mappings: mappersOf([['things', thingsMapping]]),
    logger: silentLogger(),
    now: () => new Date(clock.ms),
  });
  let n = 0;
  /** One page written and published at once, as a webhook refresh does. */
  const publish = async () => {
    n += 1;
    await sink.write(batchOf('things', `b${n}`, [record('things', String(n), { id: String(n), text: 't', parts: [] })]), new AbortController().signal);
    await sink.flush();
  };
  /** `list` calls on the drop folder itself (the staging folder aside). */
  const dropListings = () => target.listed.filter((dir) => dir === out).length;
  return { out, target, publish, dropListings };
}

/**
 * A webhook refresh publishes a batch of its own, and the drop keeps 30 days of batches by
 * default: whatever the CSV sink reads of the drop per batch grows with it. Taking the writer lock
 * reads names only; retention by age (which needs file times) runs at most once a minute.
 */
describe('what publishing a batch reads of the drop', () => {
  it('takes the writer lock with the names in the drop and staging folders, without listing them entry by entry', async () => {
    const { target, publish } = sinkIn('names', { retention: false }, { ms: Date.parse('2026-11-26T10:00:00Z') });
    await publish();
    await publish();
    await publish();
    expect(target.listed).toEqual([]);
  });

  it('by age, runs retention at the first publish and then at most once a minute of the sink clock', async () => {
    const clock = { ms: Date.parse('2026-11-26T10:00:00Z') };
    const { out, publish, dropListings } = sinkIn('by-age', { retention: { maxAgeDays: 7 } }, clock);
    await publish();
    expect(dropListings()).toBe(1);
    // An old batch (another writer's, say) appears after that pass.
    const old = path.join(out, '20261001T000000Z-000001-things.csv');
    writeFileSync(old, 'x');
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
    utimesSync(old, tenDaysAgo, tenDaysAgo);
    clock.ms += 59_000;
    await publish();
    expect({ listings: dropListings(), oldThere: existsSync(old) }).toEqual({ listings: 1, oldThere: true });
    clock.ms += 1_000;
    await publish();
    expect({ listings: dropListings(), oldThere: existsSync(old) }).toEqual({ listings: 2, oldThere: false });
  });

  it('by file count, runs retention after every publish (the count bounds the drop, and the listing with it)', async () => {
    const { publish, dropListings } = sinkIn('by-count', { retention: { maxFiles: 100 } }, { ms: Date.parse('2026-11-26T10:00:00Z') });
    await publish();
    await publish();
    await publish();
    expect(dropListings()).toBe(3);
  });
});
