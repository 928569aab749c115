import { spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { encodeChunk } from '../../connectors/file-drop/page-chunk.js';
import { FRAME_HEADER_BYTES, frameHeader } from '../../connectors/file-drop/page-frames.js';
import { scanPageLog } from '../../connectors/file-drop/page-log-scan.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { batchOf, record } from '../helpers/records.js';
import { publishedThingRows, thingsDropSink } from '../helpers/things-drop.js';

/**
 * The CSV sink stages a batch's pages as frames of one page log (page-frames.ts): a page is
 * acknowledged once its frame is fdatasync'd. These tests break that at each step — a sync that
 * fails, a cut-back that fails too, a torn or corrupt last frame left by a kill — and check that
 * every acknowledged page is published once, in order, and nothing unacknowledged is.
 */
const thing = (id: string, text = `t${id}`) => record('things', id, { id, text, parts: [{ name: 'a' }] });
const signal = () => new AbortController().signal;

// FileHandle's prototype: a sync of the page log can be made to fail like a full or broken disk.
async function fileHandlePrototype(): Promise<{ datasync: () => Promise<void>; truncate: (length?: number) => Promise<void> }> {
  const handle = await open(os.tmpdir(), 'r');
  await handle.close();
  return Object.getPrototypeOf(handle) as { datasync: () => Promise<void>; truncate: (length?: number) => Promise<void> };
}

async function setup(dir?: string) {
  const base = dir ?? (await mkdtemp(path.join(os.tmpdir(), 'drop-page-log-')));
  const out = path.join(base, 'out');
  const staging = path.join(out, '.staging');
  const logs = capturingLogger('info');
  const sink = thingsDropSink(out, { logger: logs.logger });
  await sink.recover();
  const stagedLogs = async () => (await readdir(staging)).filter((n) => n.endsWith('.pages')).sort();
  /** Every row of every published `things` file, in batch order. */
  const published = async () => (await publishedThingRows(out)).map((r) => `${r.id}:${r.text}`);
  /** As after kill -9 of this process: the sink is dropped unclosed and its lock names a process that is gone. */
  const kill = async () => {
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(path.join(staging, 'writer.lock'), JSON.stringify({ host: os.hostname(), pid: deadPid, token: 'killed', at: new Date().toISOString() }));
  };
  return { base, out, staging, sink, logs, stagedLogs, published, kill };
}

describe('CSV drop: pages staged in one page log per batch', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('appends each page as one frame of one file, publishes them in order and removes the log', async () => {
    const { sink, staging, stagedLogs, published } = await setup();
    for (let i = 1; i <= 3; i++) await sink.write(batchOf('things', `b-${i}`, [thing(String(i))]), signal());
    const [log] = await stagedLogs();
    expect(await stagedLogs()).toHaveLength(1);
    const scan = await scanPageLog(new LocalTarget(), staging, log!);
    expect(scan.pages.map((p) => p.page)).toEqual([1, 2, 3]);
    expect(scan.torn).toBe(false);
    expect(scan.intactBytes).toBe((await stat(path.join(staging, log!))).size);
    await sink.flush(signal());
    expect(await published()).toEqual(['1:t1', '2:t2', '3:t3']);
    expect(await stagedLogs()).toEqual([]);
    await sink.close();
  });

  it('a sync that fails cuts the page back off the log; the retried page follows the last acknowledged one', async () => {
    const { sink, staging, stagedLogs, published } = await setup();
    await sink.write(batchOf('things', 'b-1', [thing('1')]), signal());
    const [log] = await stagedLogs();
    const acknowledged = (await stat(path.join(staging, log!))).size;
    const proto = await fileHandlePrototype();
    const real = proto.datasync;
    vi.spyOn(proto, 'datasync').mockImplementationOnce(() => Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
    await expect(sink.write(batchOf('things', 'b-2', [thing('2', 'lost')]), signal())).rejects.toThrow(/fdatasync|i\/o/i);
    expect(proto.datasync).not.toBe(real);
    // The failed page's bytes are gone: the log is exactly the acknowledged pages.
    expect((await stat(path.join(staging, log!))).size).toBe(acknowledged);
    await sink.write(batchOf('things', 'b-2', [thing('2')]), signal());
    expect(await stagedLogs()).toEqual([log]);
    expect((await scanPageLog(new LocalTarget(), staging, log!)).pages.map((p) => p.page)).toEqual([1, 2]);
    await sink.flush(signal());
    expect(await published()).toEqual(['1:t1', '2:t2']);
    await sink.close();
  });

  it('when even the cut-back fails, the next page goes to a new segment and the later copy of a page wins at recovery', async () => {
    const first = await setup();
    await first.sink.write(batchOf('things', 'b-1', [thing('1')]), signal());
    const proto = await fileHandlePrototype();
    const failing = () => Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    // The page's sync fails, then cutting it back fails: the whole frame stays in the file.
    vi.spyOn(proto, 'datasync').mockImplementationOnce(failing);
    vi.spyOn(proto, 'truncate').mockImplementationOnce(failing);
    await expect(first.sink.write(batchOf('things', 'b-2', [thing('2', 'unacknowledged')]), signal())).rejects.toThrow(/i\/o/i);
    vi.restoreAllMocks();
    await first.sink.write(batchOf('things', 'b-2', [thing('2')]), signal());
    await first.sink.write(batchOf('things', 'b-3', [thing('3')]), signal());
    const logs = await first.stagedLogs();
    expect(logs).toEqual([expect.stringMatching(/\.000001\.pages$/), expect.stringMatching(/\.000002\.pages$/)]);
    // The failed page is whole in segment 1 (written, its sync failed): page 2 appears twice.
    expect((await scanPageLog(new LocalTarget(), first.staging, logs[0]!)).pages.map((p) => p.page)).toEqual([1, 2]);
    expect((await scanPageLog(new LocalTarget(), first.staging, logs[1]!)).pages.map((p) => p.page)).toEqual([2, 3]);
    await first.kill();

    const second = await setup(first.base);
    expect(await second.published()).toEqual(['1:t1', '2:t2', '3:t3']);
    expect(await second.stagedLogs()).toEqual([]);
    await second.sink.close();
  });

  it('in the same process, a failed segment still publishes its acknowledged pages and not the failed one', async () => {
    const { sink, published } = await setup();
    await sink.write(batchOf('things', 'b-1', [thing('1')]), signal());
    const proto = await fileHandlePrototype();
    const failing = () => Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    vi.spyOn(proto, 'datasync').mockImplementationOnce(failing);
    vi.spyOn(proto, 'truncate').mockImplementationOnce(failing);
    await expect(sink.write(batchOf('things', 'b-2', [thing('2', 'unacknowledged')]), signal())).rejects.toThrow(/i\/o/i);
    vi.restoreAllMocks();
    await sink.write(batchOf('things', 'b-2', [thing('2')]), signal());
    await sink.flush(signal());
    expect(await published()).toEqual(['1:t1', '2:t2']);
    await sink.close();
  });

  it.each([
    ['a frame cut short (kill between write and sync)', (frame: Buffer) => frame.subarray(0, Math.floor(frame.length / 2))],
    ['only part of a header', (frame: Buffer) => frame.subarray(0, 7)],
    ['a whole frame whose bytes do not match its CRC', (frame: Buffer) => Buffer.concat([frame.subarray(0, frame.length - 3), Buffer.from('zzz')])],
    ['zeros (a size extended before its data)', (frame: Buffer) => Buffer.alloc(frame.length)],
  ])('a torn last page — %s — is left out at recovery; the acknowledged pages are published', async (_name, tear) => {
    const first = await setup();
    await first.sink.write(batchOf('things', 'b-1', [thing('1')]), signal());
    await first.sink.write(batchOf('things', 'b-2', [thing('2')]), signal());
    const [log] = await first.stagedLogs();
    const parts = encodeChunk([{ table: 'things', streams: ['things'], root: 'things', key: ['id'], rows: 1, head: Buffer.from('id,text\r\n'), body: Buffer.from('3,never acknowledged\r\n') }]);
    const frame = Buffer.concat([frameHeader(3, parts), ...parts]);
    expect(frame.length).toBeGreaterThan(FRAME_HEADER_BYTES);
    await appendFile(path.join(first.staging, log!), tear(frame));
    await first.kill();

    const second = await setup(first.base);
    expect(await second.published()).toEqual(['1:t1', '2:t2']);
    expect(second.logs.text()).toMatch(/torn page/);
    expect(await second.stagedLogs()).toEqual([]);
    await second.sink.close();
  });

  it('a batch already published (its note written, its log not yet removed) is only cleaned up: its log is not read again', async () => {
    const first = await setup();
    await first.sink.write(batchOf('things', 'b-1', [thing('1')]), signal());
    const [log] = await first.stagedLogs();
    const kept = await readFile(path.join(first.staging, log!));
    await first.sink.flush(signal());
    expect(await first.published()).toEqual(['1:t1']);
    // As a kill between writing the note and removing the log leaves it — with a frame that would stop a scan.
    const garbage = [Buffer.from('not a staged page')];
    await writeFile(path.join(first.staging, log!), Buffer.concat([kept, frameHeader(2, garbage), ...garbage]));
    await writeFile(path.join(first.staging, `${log!.split('.')[0]}.published`), '');
    await first.kill();

    const second = await setup(first.base);
    expect(await second.published()).toEqual(['1:t1']);
    expect((await readdir(second.staging)).filter((n) => n !== 'writer.lock')).toEqual([]);
    await second.sink.close();
  });

  it('a whole frame that was written intact but cannot be read as a page fails recovery instead of dropping it', async () => {
    const first = await setup();
    await first.sink.write(batchOf('things', 'b-1', [thing('1')]), signal());
    const [log] = await first.stagedLogs();
    const garbage = [Buffer.from('not a staged page')];
    await appendFile(path.join(first.staging, log!), Buffer.concat([frameHeader(2, garbage), ...garbage]));
    await first.kill();
    await expect(setup(first.base)).rejects.toThrow(/\.pages at byte \d+: staged page has no index line.*not a torn write.*move .*\.pages out of the staging folder/);
  });
});
