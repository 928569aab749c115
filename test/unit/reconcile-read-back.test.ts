import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { csvConnector, csvOptionsSchema } from '../../connectors/csv/index.js';
import type { SinkRow } from '../../src/contracts/index.js';
import { parseMapping } from '../../src/mapping/index.js';
import { sameCell } from '../../src/reconcile/compare-cells.js';
import { silentLogger } from '../../src/util/logger.js';
import { mappersOf } from '../helpers/mappers.js';
import { batchOf, record } from '../helpers/records.js';

describe('reconcile: cells compared by meaning', () => {
  it.each([
    ['12.50', '12.5'],
    ['0.30', '0.3'],
    ['1234567.89', '1234567.890'],
    ['2024-03-12T15:04:05.000Z', '2024-03-12T15:04:05Z'],
    ['2024-03-12 15:04:05.000', '2024-03-12T15:04:05Z'],
    ['2024-03-12T17:04:05+02:00', '2024-03-12T15:04:05Z'],
    [null, ''],
    ["'=HYPERLINK(\"http://x\",\"x\")", '=HYPERLINK("http://x","x")'],
    ['{"b":1,"a":[1,2]}', '{"a":[1,2],"b":1}'],
  ])('%s equals %s', (sink, api) => {
    expect(sameCell(sink, api)).toBe(true);
  });

  it.each([
    ['12.51', '12.5'],
    ['0.1', '0.10000000000000001'],
    ['2024-03-12T15:04:06Z', '2024-03-12T15:04:05Z'],
    [null, '0'],
    ['PAID', 'PARTIAL_PAID'],
    ["'abc", 'abc'],
  ])('%s differs from %s', (sink, api) => {
    expect(sameCell(sink, api)).toBe(false);
  });
});

describe('reconcile: the CSV drop read back as the version per key an ERP keeps', () => {
  const mapping = parseMapping('things', { table: 'things', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: 'amount', path: 'amount' }] });

  async function drop(options: Record<string, unknown> = {}) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'reconcile-read-back-'));
    const config = csvOptionsSchema.parse({ directory: 'out', ...options });
    const instance = await csvConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: dir, mappings: mappersOf([['things', mapping]]) });
    await instance.init?.(new AbortController().signal);
    const write = (id: string, batch: string, overrides: Parameters<typeof record>[3]) =>
      instance.sink!.write(batchOf('things', batch, [record('things', id, { id, amount: overrides?.op === 'delete' ? null : `${batch}.50` }, overrides)]), new AbortController().signal);
    const read = async () => {
      await instance.sink!.flush!(new AbortController().signal);
      const rows: SinkRow[] = [];
      for await (const page of instance.reader!.readRows('things', {}, new AbortController().signal)) rows.push(...page);
      return new Map(rows.map((r) => [r.id, r]));
    };
    return { write, read, out: path.join(dir, 'out') };
  }

  it('keeps the newest version, hides a later tombstone, ignores error files, and a replayed older version does not win', async () => {
    for (const options of [{}, { header: false }, { delimiter: ';', quoted: 'all', bom: true }]) {
      const { write, read, out } = await drop(options);
      await write('a', '1', { updatedAt: '2024-03-01T00:00:00Z', syncedAt: '2024-03-01T00:00:01Z' });
      await write('a', '2', { updatedAt: '2024-03-02T00:00:00Z', syncedAt: '2024-03-02T00:00:01Z' });
      // Delivered later but older (a slow webhook refresh): the newer version stays, like an SQL sink.
      await write('a', '3', { updatedAt: '2024-03-01T12:00:00Z', syncedAt: '2024-03-03T00:00:01Z' });
      await write('b', '4', { updatedAt: '2024-03-01T00:00:00Z', syncedAt: '2024-03-01T00:00:01Z' });
      await write('b', '5', { op: 'delete', updatedAt: '2024-03-01T00:00:00Z', syncedAt: '2024-03-04T00:00:01Z' });
      await writeFile(path.join(out, 'things__x.errors.csv'), 'batch_id,record_key\r\nx,zzz\r\n');
      const rows = await read();
      expect([...rows.keys()].sort(), JSON.stringify(options)).toEqual(['a', 'b']);
      expect(rows.get('a')).toMatchObject({ amount: '2.50', _op: 'upsert', _updated_at: '2024-03-02T00:00:00Z' });
      expect(rows.get('b')).toMatchObject({ _op: 'delete', amount: null });
    }
  });
});
