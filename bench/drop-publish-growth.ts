import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type CsvModule = typeof import('../connectors/csv/index.js');
type MappingModule = typeof import('../src/mapping/index.js');
type MapperModule = typeof import('../src/mapping/stream-mapper.js');
type LoggerModule = typeof import('../src/util/logger.js');

export interface DropGrowthResult {
  /** Files in the drop before the first batch (old batches: a data file and a manifest each). */
  files: number;
  batches: number;
  /** CPU (user + system) of this process per published one-record batch. */
  cpuMsPerBatch: number;
  wallMsPerBatch: number;
}

/**
 * What one webhook refresh costs the CSV sink as the drop fills up: `batches` one-record batches,
 * each written and published at once (write + flush, as the webhook processor does), into a drop
 * that already holds `files` files — 30 days of webhook refreshes leave tens of thousands under
 * the default retention. `root` is the build whose connector is measured (this one's `dist`, or
 * another build's: a before/after comparison runs one bench against two builds).
 */
export async function benchDropGrowth(root: string, files: number, batches: number): Promise<DropGrowthResult> {
  const load = <T>(file: string) => import(path.join(root, file)) as Promise<T>;
  const { csvConnector, csvOptionsSchema } = await load<CsvModule>('connectors/csv/index.js');
  const { parseMapping } = await load<MappingModule>('src/mapping/index.js');
  const { createStreamMapper } = await load<MapperModule>('src/mapping/stream-mapper.js');
  const { silentLogger } = await load<LoggerModule>('src/util/logger.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-drop-growth-'));
  try {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    for (let i = 0; i < files / 2; i++) {
      const batch = `20261101T000000Z-${String(i + 1).padStart(6, '0')}`;
      fs.writeFileSync(path.join(out, `${batch}-things.csv`), 'id\r\n1\r\n');
      fs.writeFileSync(path.join(out, `${batch}.manifest.json`), '{}');
    }
    const mapping = parseMapping('things', { table: 'things', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: 'text', path: 'text' }] });
    const context = { instanceName: 'erp', logger: silentLogger(), baseDir: dir, mappings: new Map([['things', createStreamMapper(mapping)]]) };
    const instance = await csvConnector.create(csvOptionsSchema.parse({ directory: 'out' }), context);
    const signal = new AbortController().signal;
    await instance.init?.(signal);
    const sink = instance.sink!;
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < batches; i++) {
      const record = { stream: 'things', key: String(i), op: 'upsert' as const, updatedAt: '2026-11-26T00:00:00.000Z', data: { id: String(i), text: 'x' }, syncedAt: '2026-11-26T00:00:00.000Z' };
      await sink.write({ stream: 'things', batchId: `b${i}`, records: [record] }, signal);
      await sink.flush!(signal);
    }
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - started;
    await instance.close?.();
    return { files, batches, cpuMsPerBatch: (used.user + used.system) / 1000 / batches, wallMsPerBatch: wall / batches };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// `node dist/bench/drop-publish-growth.js [files] [batches]` (defaults 10000, 30); `BENCH_DROP_ROOT`: another build's `dist`.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.env['BENCH_DROP_ROOT'] ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  benchDropGrowth(root, Number(process.argv[2] ?? 10_000), Number(process.argv[3] ?? 30))
    .then((result) => console.log(JSON.stringify(result)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
