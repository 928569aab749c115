import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvConnector, csvOptionsSchema, dataFileName, safeFileComponent, type CsvOptionsInput } from '../../connectors/csv/index.js';
import { loadMapping, parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import { silentLogger } from '../../src/util/logger.js';
import type { RecordBatch } from '../../src/contracts/index.js';
import { batchOf, fixture, record } from '../helpers/records.js';
import { mappersOf } from '../helpers/mappers.js';

const simple = parseMapping('things', {
  table: 'things',
  key: ['id'],
  columns: [
    { name: 'id', path: 'id' },
    { name: 'text', path: 'text' },
    { name: 'flag', path: 'flag' },
    { name: 'when', path: 'when', transform: 'date' },
  ],
  children: [{ table: 'thing_parts', path: 'parts', parentKey: { id: 'id' }, key: ['id', 'n'], columns: [{ name: 'n', path: '$index' }, { name: 'part', path: 'name' }] }],
});

async function setup(options: Partial<CsvOptionsInput> = {}, mappings: [string, StreamMapping][] = [['things', simple]]) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'csv-connector-'));
  const config = csvOptionsSchema.parse({ directory: 'out', ...options });
  const instance = await csvConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: dir, mappings: mappersOf(mappings) });
  await instance.init?.(new AbortController().signal);
  const out = path.join(dir, 'out');
  const write = (batch: RecordBatch, signal = new AbortController().signal) => instance.sink!.write(batch, signal);
  return { out, write, list: async () => (await readdir(out)).sort() };
}

const thing = (id: string, extra: Record<string, unknown> = {}) => record('things', id, { id, text: `t${id}`, flag: true, when: '2024-01-02T03:04:05Z', parts: [{ name: 'a' }, { name: 'b' }], ...extra });
const rows = (buffer: Buffer | string, delimiter = ',') => parse(buffer, { columns: true, delimiter, bom: true }) as Record<string, string>[];

describe('csv connector', () => {
  it('writes one file per table per batch with CRLF by default, header and meta columns', async () => {
    const { out, write, list } = await setup();
    await write(batchOf('things', 'b-1', [thing('1'), thing('2')]));
    expect(await list()).toEqual(['thing_parts__b-1.csv', 'things__b-1.csv']);
    const text = await readFile(path.join(out, 'things__b-1.csv'), 'utf8');
    expect(text.startsWith('id,text,flag,when,_op,_updated_at,_synced_at,_run_id\r\n')).toBe(true);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(rows(text)).toEqual([
      expect.objectContaining({ id: '1', text: 't1', flag: 'true', when: '2024-01-02T03:04:05.000Z', _op: 'upsert' }),
      expect.objectContaining({ id: '2' }),
    ]);
    expect(rows(await readFile(path.join(out, 'thing_parts__b-1.csv'))).map((r) => [r.id, r.n, r.part])).toEqual([
      ['1', '0', 'a'], ['1', '1', 'b'], ['2', '0', 'a'], ['2', '1', 'b'],
    ]);
  });

  it('a replayed batch replaces its files instead of duplicating rows', async () => {
    const { out, write, list } = await setup({ marker: 'done' });
    await write(batchOf('things', 'b-1', [thing('1')]));
    await write(batchOf('things', 'b-1', [thing('1', { text: 'changed' })]));
    expect(await list()).toEqual(['thing_parts__b-1.csv', 'thing_parts__b-1.csv.done', 'things__b-1.csv', 'things__b-1.csv.done']);
    expect(rows(await readFile(path.join(out, 'things__b-1.csv')))).toEqual([expect.objectContaining({ id: '1', text: 'changed' })]);
  });

  it('quotes delimiter, quote and newlines (auto), everything (all), and honours delimiter and LF', async () => {
    const nasty = 'a,b "q"\nline2;x';
    const auto = await setup();
    await auto.write(batchOf('things', 'q', [thing('1', { text: nasty })]));
    const autoText = await readFile(path.join(auto.out, 'things__q.csv'), 'utf8');
    expect(autoText).toContain('"a,b ""q""\nline2;x"');
    expect(rows(autoText)[0]!.text).toBe(nasty);

    const custom = await setup({ delimiter: ';', lineEnding: 'lf', quoted: 'all' });
    await custom.write(batchOf('things', 'q', [thing('1', { text: nasty })]));
    const customText = await readFile(path.join(custom.out, 'things__q.csv'), 'utf8');
    expect(customText.split('\n')[0]).toBe('"id";"text";"flag";"when";"_op";"_updated_at";"_synced_at";"_run_id"');
    expect(customText).not.toContain('\r\n');
    expect(rows(customText, ';')[0]!.text).toBe(nasty);
  });

  it('writes a BOM only when asked, and encodes utf16le and latin1', async () => {
    const plain = await setup();
    await plain.write(batchOf('things', 'e', [thing('1', { text: 'café' })]));
    expect((await readFile(path.join(plain.out, 'things__e.csv')))[0]).toBe(0x69); // "i" of "id"

    const bom = await setup({ bom: true });
    await bom.write(batchOf('things', 'e', [thing('1', { text: 'café' })]));
    expect([...(await readFile(path.join(bom.out, 'things__e.csv'))).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);

    const utf16 = await setup({ encoding: 'utf16le', bom: true });
    await utf16.write(batchOf('things', 'e', [thing('1', { text: 'café 中' })]));
    const u16 = await readFile(path.join(utf16.out, 'things__e.csv'));
    expect([...u16.subarray(0, 4)]).toEqual([0xff, 0xfe, 0x69, 0x00]);
    expect(u16.toString('utf16le')).toContain('café 中');

    const latin1 = await setup({ encoding: 'latin1' });
    const ack = await latin1.write(batchOf('things', 'e', [thing('1', { text: 'café' }), thing('2', { text: '中文' })]));
    const l1 = await readFile(path.join(latin1.out, 'things__e.csv'));
    expect(l1.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe(true); // "café" in latin1
    expect(rows(l1.toString('latin1')).map((r) => r.id)).toEqual(['1']);
    // The record that latin1 cannot hold is not dropped silently: the acknowledgement names it.
    expect(ack?.rejected.map((r) => r.key)).toEqual(['2']);
    expect(ack?.rejected[0]!.reason).toContain('column text');
    expect(ack?.rejected[0]!.reason).toContain('U+4E2D cannot be encoded in latin1');
    expect(await latin1.list()).toEqual(['thing_parts__e.csv', 'things__e.csv']);
  });

  it('writes a manifest whose checksum and size match the file', async () => {
    const { out, write } = await setup({ marker: 'manifest' });
    await write(batchOf('things', 'm-1', [thing('1')]));
    const data = await readFile(path.join(out, 'things__m-1.csv'));
    const manifest = JSON.parse(await readFile(path.join(out, 'things__m-1.csv.manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ file: 'things__m-1.csv', table: 'things', stream: 'things', batchId: 'm-1', rows: 1, bytes: data.length });
    expect(manifest.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    expect(Number.isNaN(Date.parse(String(manifest.createdAt)))).toBe(false);
  });

  it('keeps file names safe and distinct whatever the batch id', async () => {
    const { out, write, list } = await setup();
    for (const id of ['../../etc/passwd', 'a/b', 'a_b', 'ünïcødé', '..', 'x'.repeat(300)]) await write(batchOf('things', id, [thing('1')]));
    const names = (await list()).filter((n) => n.startsWith('things__'));
    expect(names).toHaveLength(6);
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(name).not.toContain('..');
      expect(name.length).toBeLessThan(160);
    }
    expect(path.dirname(path.resolve(out, dataFileName('things', '../../etc/passwd')))).toBe(out);
    expect(safeFileComponent('a/b')).not.toBe(safeFileComponent('a_b'));
    expect(safeFileComponent('a_b')).toBe('a_b');
    expect(safeFileComponent('ok.errors')).not.toBe('ok.errors');
  });

  it('an aborted write leaves no final file and no temp file', async () => {
    const { write, list } = await setup();
    const controller = new AbortController();
    controller.abort(new Error('shutdown'));
    await expect(write(batchOf('things', 'a-1', [thing('1')]), controller.signal)).rejects.toThrow('shutdown');
    expect(await list()).toEqual([]);
  });

  it('an abort while the batch is in progress publishes nothing and leaves no temp file', async () => {
    const { write, list } = await setup();
    const controller = new AbortController();
    const many = Array.from({ length: 2000 }, (_, i) => thing(String(i)));
    const pending = write(batchOf('things', 'a-2', many), controller.signal);
    queueMicrotask(() => controller.abort(new Error('stop now')));
    await expect(pending).rejects.toThrow('stop now');
    expect(await list()).toEqual([]);
  });

  it('retention deletes old files with their markers and keeps recent ones', async () => {
    const { out, write, list } = await setup({ marker: 'done', retention: { maxAgeDays: 7 } });
    await write(batchOf('things', 'old', [thing('1')]));
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const name of await list()) await utimes(path.join(out, name), old, old);
    await writeFile(path.join(out, '.tmp-inuse-things__x.csv'), 'partial');
    await utimes(path.join(out, '.tmp-inuse-things__x.csv'), old, old);
    await writeFile(path.join(out, 'unrelated.txt'), 'keep me');
    await utimes(path.join(out, 'unrelated.txt'), old, old);
    await write(batchOf('things', 'new', [thing('2')]));
    expect(await list()).toEqual([
      '.tmp-inuse-things__x.csv',
      'thing_parts__new.csv', 'thing_parts__new.csv.done',
      'things__new.csv', 'things__new.csv.done',
      'unrelated.txt',
    ]);
  });

  it('retention by count keeps the newest files and never the batch just written', async () => {
    const { out, write, list } = await setup({ retention: { maxFiles: 3 } });
    for (const [i, id] of ['b1', 'b2', 'b3'].entries()) {
      await write(batchOf('things', id, [thing('1')]));
      const t = new Date(Date.now() - (10 - i) * 60_000);
      for (const name of (await list()).filter((n) => n.includes(id))) await utimes(path.join(out, name), t, t);
    }
    await write(batchOf('things', 'b4', [thing('1')]));
    // b4 is protected (2 files); the one slot left goes to the newest older file (ties by name).
    expect(await list()).toEqual(['thing_parts__b3.csv', 'thing_parts__b4.csv', 'things__b4.csv']);
  });

  it('writes tombstones as delete rows; a record that fails to map is left out and named in the acknowledgement', async () => {
    const { out, write, list } = await setup();
    const ack = await write(batchOf('things', 'mix', [thing('1'), thing('2', { when: 'yesterday' }), thing('3', {}), record('things', '4', { id: '4', text: 'gone', parts: [{ name: 'z' }] }, { op: 'delete' })]));
    // Data only: the refusal goes to the engine's quarantine, not to an errors file.
    expect(await list()).toEqual(['thing_parts__mix.csv', 'things__mix.csv']);
    expect(rows(await readFile(path.join(out, 'things__mix.csv'))).map((r) => [r.id, r._op])).toEqual([['1', 'upsert'], ['3', 'upsert'], ['4', 'delete']]);
    expect(rows(await readFile(path.join(out, 'thing_parts__mix.csv'))).map((r) => r.id)).toEqual(['1', '1', '3', '3']);
    expect(ack).toEqual({ rejected: [{ key: '2', reason: 'stream things, key 2, column when: cannot parse date "yesterday"' }] });

    // Every record maps: nothing refused.
    expect(await write(batchOf('things', 'mix', [thing('1'), thing('2'), thing('3')]))).toEqual({ rejected: [] });
  });

  it('onMappingError: fail rejects the batch and writes nothing', async () => {
    const { write, list } = await setup({ onMappingError: 'fail' });
    await expect(write(batchOf('things', 'f', [thing('1'), thing('2', { when: 'nope' })]))).rejects.toThrow('column when: cannot parse date "nope"');
    expect(await list()).toEqual([]);
  });

  it('writes default-mapped loads, invoices and bills', async () => {
    const streams = ['loads', 'invoices', 'bills'] as const;
    const mappings: [string, StreamMapping][] = [];
    for (const s of streams) mappings.push([s, await loadMapping(s, undefined, { baseDir: '/', variant: 'main' })]);
    const { out, write, list } = await setup({}, mappings);
    await write(batchOf('loads', 'L1', [record('loads', 'M000123', fixture('load-main'))]));
    await write(batchOf('invoices', 'I1', [record('invoices', 'inv-1', fixture('invoice'))]));
    await write(batchOf('bills', 'B1', [record('bills', 'bill-1', fixture('bill'))]));
    expect(await list()).toEqual([
      'bill_charge_sets__B1.csv', 'bill_pricing_lines__B1.csv', 'bills__B1.csv',
      'invoice_entries__I1.csv', 'invoice_payments__I1.csv', 'invoice_pricing_lines__I1.csv', 'invoices__I1.csv',
      'load_stops__L1.csv', 'loads__L1.csv',
    ]);
    const [load] = rows(await readFile(path.join(out, 'loads__L1.csv')));
    expect(load).toMatchObject({ reference_number: 'M000123', consignee_name: 'Warehouse 7\nDock B', shipper_name: 'Port of "Long" Beach' });
    expect(JSON.parse(load!._raw!)).toEqual(fixture('load-main'));
  });

  it('rejects unknown options', () => {
    expect(csvOptionsSchema.safeParse({ directory: 'x', delimeter: ';' }).success).toBe(false);
    expect(csvOptionsSchema.safeParse({ directory: 'x', encoding: 'latin1', bom: true }).success).toBe(false);
  });
});
