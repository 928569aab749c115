import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvConnector, csvOptionsSchema, dataFileName, safeFileComponent, type CsvOptionsInput } from '../../connectors/csv/index.js';
import { batchDataFileName, batchFileOf, batchName } from '../../connectors/file-drop/index.js';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { scanPageLog } from '../../connectors/file-drop/page-log-scan.js';
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

const BATCH = /^\d{8}T\d{6}Z-\d{6}$/;

async function setup(options: Partial<CsvOptionsInput> = {}, mappings: [string, StreamMapping][] = [['things', simple]], baseDir?: string) {
  const dir = baseDir ?? (await mkdtemp(path.join(os.tmpdir(), 'csv-connector-')));
  const config = csvOptionsSchema.parse({ directory: 'out', ...options });
  const instance = await csvConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: dir, mappings: mappersOf(mappings) });
  await instance.init?.(new AbortController().signal);
  const out = path.join(dir, 'out');
  const write = (batch: RecordBatch, signal = new AbortController().signal) => instance.sink!.write(batch, signal);
  const flush = () => instance.sink!.flush!(new AbortController().signal);
  /** Published entries (the hidden staging folder aside). */
  const list = async () => (await readdir(out)).filter((n) => n !== '.staging').sort();
  // The writer lock (held while a batch is open) is not a staged page.
  const staged = async () => (await readdir(path.join(out, '.staging'))).filter((n) => n !== 'writer.lock').sort();
  /** The batches published so far, in name order, with their manifests. */
  const batches = async () => {
    const names = (await list()).filter((n) => n.endsWith('.manifest.json'));
    return Promise.all(names.map(async (n) => JSON.parse(await readFile(path.join(out, n), 'utf8')) as Manifest));
  };
  /** One write, published at once (as at the end of a run). */
  const publish = async (batch: RecordBatch) => {
    const ack = await write(batch);
    await flush();
    return ack;
  };
  /** The rows of the table's file in the last published batch. */
  const lastRows = async (table: string, delimiter = ',') => rows(await readFile(await lastFile(out, table)), delimiter);
  return { dir, out, instance, write, flush, publish, list, staged, batches, lastRows };
}

interface Manifest {
  batch: string;
  createdAt: string;
  rows: number;
  files: { file: string; table: string; streams: string[]; rows: number; bytes: number; sha256: string }[];
}

async function lastFile(out: string, table: string): Promise<string> {
  const names = (await readdir(out)).filter((n) => n.endsWith(`-${table}.csv`)).sort();
  if (names.length === 0) throw new Error(`no file of table ${table} in ${out}`);
  return path.join(out, names.at(-1)!);
}

const thing = (id: string, extra: Record<string, unknown> = {}) => record('things', id, { id, text: `t${id}`, flag: true, when: '2024-01-02T03:04:05Z', parts: [{ name: 'a' }, { name: 'b' }], ...extra });
const rows = (buffer: Buffer | string, delimiter = ',') => parse(buffer, { columns: true, delimiter, bom: true }) as Record<string, string>[];

describe('csv connector', () => {
  it('stages pages until the run ends, then publishes one file per table with CRLF, header and meta columns', async () => {
    const { out, write, flush, list, staged, batches, lastRows } = await setup();
    await write(batchOf('things', 'b-1', [thing('1')]));
    await write(batchOf('things', 'b-2', [thing('2')]));
    // Acknowledged pages are durable in the staging folder, not yet visible to the ERP.
    expect(await list()).toEqual([]);
    // Both pages are frames of the batch's one page log.
    expect(await staged()).toEqual([expect.stringMatching(/^\d{8}T\d{6}Z-000001\.000001\.pages$/)]);
    const [log] = await staged();
    expect((await scanPageLog(new LocalTarget(), path.join(out, '.staging'), log!)).pages.map((p) => p.page)).toEqual([1, 2]);
    await flush();
    const [batch] = await batches();
    expect(batch!.batch).toMatch(BATCH);
    // The manifest sorts after its files: a consumer listing by name meets the files first.
    expect(await list()).toEqual([`${batch!.batch}-thing_parts.csv`, `${batch!.batch}-things.csv`, `${batch!.batch}.manifest.json`]);
    expect(await staged()).toEqual([]);
    const text = await readFile(path.join(out, `${batch!.batch}-things.csv`), 'utf8');
    expect(text.startsWith('id,text,flag,when,_op,_updated_at,_synced_at,_run_id\r\n')).toBe(true);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.match(/^id,/gm)).toHaveLength(1);
    expect(await lastRows('things')).toEqual([
      expect.objectContaining({ id: '1', text: 't1', flag: 'true', when: '2024-01-02T03:04:05.000Z', _op: 'upsert' }),
      expect.objectContaining({ id: '2' }),
    ]);
    expect((await lastRows('thing_parts')).map((r) => [r.id, r.n, r.part])).toEqual([
      ['1', '0', 'a'], ['1', '1', 'b'], ['2', '0', 'a'], ['2', '1', 'b'],
    ]);
    // Nothing staged: nothing to publish, no empty batch.
    await flush();
    expect(await batches()).toHaveLength(1);
  });

  it('writes a manifest LAST whose row counts, sizes and checksums match the files', async () => {
    const { out, publish, batches } = await setup();
    await publish(batchOf('things', 'm-1', [thing('1'), thing('2', { parts: [] })]));
    const [manifest] = await batches();
    expect(manifest).toMatchObject({ rows: 4, files: [
      { table: 'things', streams: ['things'], rows: 2 },
      { table: 'thing_parts', streams: ['things'], rows: 2 },
    ] });
    expect(Number.isNaN(Date.parse(manifest!.createdAt))).toBe(false);
    for (const file of manifest!.files) {
      const data = await readFile(path.join(out, file.file));
      expect(file.bytes).toBe(data.length);
      expect(file.sha256).toBe(createHash('sha256').update(data).digest('hex'));
      expect(rows(data)).toHaveLength(file.rows);
    }
  });

  it('streams a batch file from its pages, small and large (a page bigger than the read buffer), byte for byte as staged', async () => {
    const { write, flush, batches, out } = await setup();
    const big = 'x'.repeat(1_500_000);
    await write(batchOf('things', 's-1', [thing('1'), thing('2')]));
    await write(batchOf('things', 's-2', [thing('3', { text: big })]));
    await write(batchOf('things', 's-3', [thing('4')]));
    await flush();
    const [manifest] = await batches();
    const things = await readFile(await lastFile(out, 'things'));
    expect(rows(things).map((r) => [r.id, r.text!.length])).toEqual([['1', 2], ['2', 2], ['3', big.length], ['4', 2]]);
    expect(things.toString('utf8').match(/^id,/gm)).toHaveLength(1);
    expect(manifest!.files.find((f) => f.table === 'things')).toMatchObject({ rows: 4, bytes: things.length, sha256: createHash('sha256').update(things).digest('hex') });
    expect(rows(await readFile(await lastFile(out, 'thing_parts'))).map((r) => r.id)).toEqual(['1', '1', '2', '2', '3', '3', '4', '4']);
  });

  it('never writes a header-only file: a table without rows in the batch has no file', async () => {
    const { publish, list, batches } = await setup();
    await publish(batchOf('things', 'n', [thing('1', { parts: [] })]));
    const [batch] = await batches();
    expect(await list()).toEqual([`${batch!.batch}-things.csv`, `${batch!.batch}.manifest.json`]);
  });

  it('batch names sort by time and sequence, also across restarts and a clock that went back', async () => {
    const first = await setup();
    await first.publish(batchOf('things', 'a', [thing('1')]));
    await first.publish(batchOf('things', 'b', [thing('2')]));
    // A batch from "the future" (a clock set back since): new names still sort after it.
    await writeFile(path.join(first.out, '29991231T235959Z-000007.manifest.json'), '{}');
    const again = await setup({}, [['things', simple]], first.dir);
    await again.publish(batchOf('things', 'c', [thing('3')]));
    const names = (await again.list()).filter((n) => n.endsWith('.manifest.json'));
    expect(names).toEqual([...names].sort());
    expect(names.map((n) => n.replace(/^\d{8}T\d{6}Z-/, ''))).toEqual(['000001.manifest.json', '000002.manifest.json', '000007.manifest.json', '000008.manifest.json']);
    expect(names.at(-1)).toBe('29991231T235959Z-000008.manifest.json');
  });

  it('publishes a batch as soon as a table reaches maxBatchRows, and the rest at the end of the run', async () => {
    const { write, flush, batches } = await setup({ maxBatchRows: 5 });
    for (let i = 0; i < 4; i += 1) await write(batchOf('things', `p${i}`, [thing(String(i))]));
    // Page 3 made thing_parts reach 6 rows: that batch is out, page 4 waits for the flush.
    expect((await batches()).map((b) => b.files.map((f) => [f.table, f.rows]))).toEqual([[['things', 3], ['thing_parts', 6]]]);
    await flush();
    expect((await batches()).map((b) => b.rows)).toEqual([9, 3]);
  });

  it('a page staged before a kill is published at the next start, whole and in order; a half-published batch is finished', async () => {
    const first = await setup();
    await first.publish(batchOf('things', 'before', [thing('0')]));
    await first.write(batchOf('things', 'k-1', [thing('1')]));
    await first.write(batchOf('things', 'k-2', [thing('2')]));
    // As after kill -9: no flush, no close. A partly written temp page of an unacknowledged write is left too.
    await writeFile(path.join(first.out, '.staging', '.tmp-x.page-abc'), 'half');
    const [stagedName] = (await first.staged()).filter((n) => n.endsWith('.pages'));
    const leftBatch = stagedName!.slice(0, stagedName!.indexOf('.'));
    // A publish interrupted after the data files, before the manifest: one file already in place.
    await writeFile(path.join(first.out, `${leftBatch}-things.csv`), 'id\r\n1\r\n');
    // The killed writer's lock stays behind, naming a process that no longer runs: taken over.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(path.join(first.out, '.staging', 'writer.lock'), JSON.stringify({ host: os.hostname(), pid: deadPid, token: 'killed', at: new Date().toISOString() }));

    const second = await setup({}, [['things', simple]], first.dir);
    const all = await second.batches();
    expect(all.map((b) => b.batch)).toEqual([expect.stringMatching(/-000001$/), leftBatch]);
    expect((await second.lastRows('things')).map((r) => r.id)).toEqual(['1', '2']);
    expect((await second.lastRows('thing_parts')).map((r) => r.id)).toEqual(['1', '1', '2', '2']);
    expect((await second.staged()).filter((n) => !n.startsWith('.tmp-'))).toEqual([]);
    // New batches come after the recovered one.
    await second.publish(batchOf('things', 'after', [thing('3')]));
    expect((await second.batches()).at(-1)!.batch > leftBatch).toBe(true);
  });

  it('quotes delimiter, quote and newlines (auto), everything (all), and honours delimiter and LF', async () => {
    const nasty = 'a,b "q"\nline2;x';
    const auto = await setup();
    await auto.publish(batchOf('things', 'q', [thing('1', { text: nasty })]));
    const autoText = await readFile(await lastFile(auto.out, 'things'), 'utf8');
    expect(autoText).toContain('"a,b ""q""\nline2;x"');
    expect(rows(autoText)[0]!.text).toBe(nasty);

    const custom = await setup({ delimiter: ';', lineEnding: 'lf', quoted: 'all' });
    await custom.publish(batchOf('things', 'q', [thing('1', { text: nasty })]));
    await custom.publish(batchOf('things', 'q2', [thing('2')]));
    const customText = await readFile(await lastFile(custom.out, 'things'), 'utf8');
    expect(customText.split('\n')[0]).toBe('"id";"text";"flag";"when";"_op";"_updated_at";"_synced_at";"_run_id"');
    expect(customText).not.toContain('\r\n');
    expect(rows(customText, ';')[0]!.id).toBe('2');
  });

  it('writes a BOM only when asked (once per file), and encodes utf16le and latin1', async () => {
    const plain = await setup();
    await plain.publish(batchOf('things', 'e', [thing('1', { text: 'café' })]));
    expect((await readFile(await lastFile(plain.out, 'things')))[0]).toBe(0x69); // "i" of "id"

    const bom = await setup({ bom: true });
    await bom.write(batchOf('things', 'e', [thing('1', { text: 'café' })]));
    await bom.write(batchOf('things', 'e2', [thing('2')]));
    await bom.flush();
    const withBom = await readFile(await lastFile(bom.out, 'things'));
    expect([...withBom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(withBom.indexOf(Buffer.from([0xef, 0xbb, 0xbf]), 1)).toBe(-1);
    expect(rows(withBom).map((r) => r.id)).toEqual(['1', '2']);

    const utf16 = await setup({ encoding: 'utf16le', bom: true });
    await utf16.publish(batchOf('things', 'e', [thing('1', { text: 'café 中' })]));
    const u16 = await readFile(await lastFile(utf16.out, 'things'));
    expect([...u16.subarray(0, 4)]).toEqual([0xff, 0xfe, 0x69, 0x00]);
    expect(u16.toString('utf16le')).toContain('café 中');

    const latin1 = await setup({ encoding: 'latin1' });
    const ack = await latin1.publish(batchOf('things', 'e', [thing('1', { text: 'café' }), thing('2', { text: '中文' })]));
    const l1 = await readFile(await lastFile(latin1.out, 'things'));
    expect(l1.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe(true); // "café" in latin1
    expect(rows(l1.toString('latin1')).map((r) => r.id)).toEqual(['1']);
    // The record that latin1 cannot hold is not dropped silently: the acknowledgement names it.
    expect(ack?.rejected.map((r) => r.key)).toEqual(['2']);
    expect(ack?.rejected[0]!.reason).toContain('column text');
    expect(ack?.rejected[0]!.reason).toContain('U+4E2D cannot be encoded in latin1');
  });

  it('marker: done writes an empty <batch>.done last; none writes no marker', async () => {
    const done = await setup({ marker: 'done' });
    await done.publish(batchOf('things', 'd', [thing('1')]));
    const names = await done.list();
    expect(names).toHaveLength(3);
    expect(names[2]).toMatch(/^\d{8}T\d{6}Z-000001\.done$/);
    expect((await readFile(path.join(done.out, names[2]!))).length).toBe(0);

    const none = await setup({ marker: 'none' });
    await none.publish(batchOf('things', 'd', [thing('1')]));
    expect((await none.list()).every((n) => n.endsWith('.csv'))).toBe(true);
  });

  it('keeps file names safe whatever the table name', () => {
    const batch = batchName('20240101T000000Z', 1);
    for (const table of ['../../etc/passwd', 'a/b', 'Ünï code', '..', 'x'.repeat(300)]) {
      const name = batchDataFileName(batch, table);
      expect(name).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(name).not.toContain('..');
      expect(name.length).toBeLessThan(120);
      expect(batchFileOf(name)).toEqual({ batch, table: safeFileComponent(table, 60) });
    }
    expect(path.dirname(path.resolve('/out', dataFileName('things', '../../etc/passwd')))).toBe('/out');
    expect(safeFileComponent('a/b')).not.toBe(safeFileComponent('a_b'));
    expect(safeFileComponent('a_b')).toBe('a_b');
    expect(safeFileComponent('ok.errors')).not.toBe('ok.errors');
  });

  it('an aborted write stages nothing and publishes nothing', async () => {
    const { write, flush, list, staged } = await setup();
    const controller = new AbortController();
    controller.abort(new Error('shutdown'));
    await expect(write(batchOf('things', 'a-1', [thing('1')]), controller.signal)).rejects.toThrow('shutdown');
    const many = Array.from({ length: 2000 }, (_, i) => thing(String(i)));
    const late = new AbortController();
    const pending = write(batchOf('things', 'a-2', many), late.signal);
    queueMicrotask(() => late.abort(new Error('stop now')));
    await expect(pending).rejects.toThrow('stop now');
    await flush();
    expect(await list()).toEqual([]);
    expect(await staged()).toEqual([]);
  });

  it('retention is on by default and deletes old batches whole (manifest first), old-layout files too', async () => {
    expect(csvOptionsSchema.parse({ directory: 'x' }).retention).toEqual({ maxAgeDays: 30 });
    const first = await setup({ retention: { maxAgeDays: 7 } });
    const { out, list } = first;
    await first.publish(batchOf('things', 'old', [thing('1')]));
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const name of await list()) await utimes(path.join(out, name), old, old);
    const addOld = async (names: string[]) => {
      for (const name of names) {
        await writeFile(path.join(out, name), 'x');
        await utimes(path.join(out, name), old, old);
      }
    };
    await addOld(['things__legacy.csv', 'things__legacy.csv.done', 'unrelated.txt']);
    // By age, retention runs at a sink's first publish and then at most once a minute (see
    // file-drop-listing-cost.test.ts): a restarted sink meets the aged batch. The temp file comes
    // after its start-up (which clears old temp files): retention itself never touches one.
    const restarted = await setup({ retention: { maxAgeDays: 7 } }, undefined, first.dir);
    await addOld(['.tmp-inuse-things__x.csv']);
    await restarted.publish(batchOf('things', 'new', [thing('2')]));
    expect(await list()).toEqual([
      '.tmp-inuse-things__x.csv',
      expect.stringMatching(/-000002-thing_parts\.csv$/),
      expect.stringMatching(/-000002-things\.csv$/),
      expect.stringMatching(/-000002\.manifest\.json$/),
      'unrelated.txt',
    ]);
  });

  it('retention by count keeps the newest whole batches and never the one just published; false keeps all', async () => {
    const { out, publish, list } = await setup({ retention: { maxFiles: 3 } });
    for (let i = 0; i < 3; i += 1) {
      await publish(batchOf('things', `b${i}`, [thing('1', i === 2 ? { parts: [] } : {})]));
      const t = new Date(Date.now() - (10 - i) * 60_000);
      for (const name of (await list()).filter((n) => n.includes(`-00000${i + 1}`))) await utimes(path.join(out, name), t, t);
    }
    await publish(batchOf('things', 'b3', [thing('1')]));
    // Batch 4 (2 files) is protected; batch 3 (1 file) fits the third slot; batches 1 and 2 go.
    expect((await list()).map((n) => n.replace(/^\d{8}T\d{6}Z-/, ''))).toEqual([
      '000003-things.csv', '000003.manifest.json',
      '000004-thing_parts.csv', '000004-things.csv', '000004.manifest.json',
    ]);

    const keepAll = await setup({ retention: false });
    for (let i = 0; i < 3; i += 1) await keepAll.publish(batchOf('things', `k${i}`, [thing('1')]));
    expect(await keepAll.list()).toHaveLength(9);
  });

  it('writes tombstones and child rows in the same batch as their parents (a tombstone has no child rows); a record that fails to map is named in the acknowledgement', async () => {
    const { publish, lastRows } = await setup();
    const ack = await publish(batchOf('things', 'mix', [thing('1'), thing('2', { when: 'yesterday' }), thing('3', {}), record('things', '4', { id: '4', text: 'gone', parts: [{ name: 'z' }] }, { op: 'delete' })]));
    expect((await lastRows('things')).map((r) => [r.id, r._op])).toEqual([['1', 'upsert'], ['3', 'upsert'], ['4', 'delete']]);
    expect((await lastRows('thing_parts')).map((r) => r.id)).toEqual(['1', '1', '3', '3']);
    expect(ack).toEqual({ rejected: [{ key: '2', reason: 'stream things, key 2, column when: cannot parse date "yesterday"' }] });

    // Every record maps: nothing refused.
    expect(await publish(batchOf('things', 'mix', [thing('1'), thing('2'), thing('3')]))).toEqual({ rejected: [] });
  });

  it('onMappingError: fail rejects the batch and stages nothing', async () => {
    const { write, flush, list, staged } = await setup({ onMappingError: 'fail' });
    await expect(write(batchOf('things', 'f', [thing('1'), thing('2', { when: 'nope' })]))).rejects.toThrow('column when: cannot parse date "nope"');
    expect(await staged()).toEqual([]);
    await flush();
    expect(await list()).toEqual([]);
  });

  it('writes default-mapped loads, invoices and bills, the tables of each stream in one batch', async () => {
    const streams = ['loads', 'invoices', 'bills'] as const;
    const mappings: [string, StreamMapping][] = [];
    for (const s of streams) mappings.push([s, await loadMapping(s, undefined, { baseDir: '/', variant: 'main' })]);
    const { publish, batches, lastRows } = await setup({}, mappings);
    await publish(batchOf('loads', 'L1', [record('loads', 'M000123', fixture('load-main'))]));
    await publish(batchOf('invoices', 'I1', [record('invoices', 'inv-1', fixture('invoice'))]));
    await publish(batchOf('bills', 'B1', [record('bills', 'bill-1', fixture('bill'))]));
    expect((await batches()).map((b) => b.files.map((f) => f.table).sort())).toEqual([
      ['load_stops', 'loads'],
      ['invoice_entries', 'invoice_payments', 'invoice_pricing_lines', 'invoices'],
      ['bill_charge_sets', 'bill_pricing_lines', 'bills'],
    ]);
    const [load] = await lastRows('loads');
    expect(load).toMatchObject({ reference_number: 'M000123', consignee_name: 'Warehouse 7\nDock B', shipper_name: 'Port of "Long" Beach' });
    expect(JSON.parse(load!._raw!)).toEqual(fixture('load-main'));
  });

  it('reads back both layouts: batch files and files written before batches', async () => {
    const { out, instance, publish } = await setup();
    await writeFile(path.join(out, 'things__legacy.csv'), 'id,text,flag,when,_op,_updated_at,_synced_at,_run_id\r\n9,old,true,,upsert,2024-03-12T15:04:05.000Z,2024-03-01T00:00:00.000Z,\r\n');
    await publish(batchOf('things', 'r', [thing('1')]));
    const read: Record<string, string | null>[] = [];
    for await (const page of instance.reader!.readRows('things', {}, new AbortController().signal)) read.push(...page);
    expect(read.map((r) => r.id).sort()).toEqual(['1', '9']);
  });

  it('rejects unknown options, with a message for a wrong retention', () => {
    expect(csvOptionsSchema.safeParse({ directory: 'x', delimeter: ';' }).success).toBe(false);
    expect(csvOptionsSchema.safeParse({ directory: 'x', encoding: 'latin1', bom: true }).success).toBe(false);
    expect(csvOptionsSchema.safeParse({ directory: 'x', retention: true }).success).toBe(false);
    expect(csvOptionsSchema.safeParse({ directory: 'x', maxBatchRows: 0 }).success).toBe(false);
    expect(csvOptionsSchema.parse({ directory: 'x' })).toMatchObject({ marker: 'manifest', maxBatchRows: 10_000 });
  });
});
