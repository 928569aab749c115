import { createReadStream } from 'node:fs';
import { open as openFile, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { FileTarget, RangeReader, StagedFile } from './file-target.js';
import { writeFileAtomic } from './file-target.js';
import { BATCH_DONE_SUFFIX, BATCH_MANIFEST_SUFFIX, batchDataFileName } from './file-names.js';
import type { CsvFormat } from './format-options.js';
import { decodeChunk, type ChunkTable, type PartLayout, type TableInfo } from './page-chunk.js';
import { createSpoolDir } from './publish-spool.js';

/** Suffix of the staging note saying a batch is fully published (its pages may go). */
export const PUBLISHED_SUFFIX = '.published';
/** Buffer the staged pages of a batch are read into, one after the other (a page of 50 loads is ~150 KB); grows to the largest page. */
const SCRATCH_BYTES = 1024 * 1024;

export interface BatchFile extends TableInfo {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * One staged page of a batch: a file of its own (`<batch>.<page>.page`), or a frame of the
 * batch's page log (`<batch>.<segment>.pages`, page-frames.ts). `parts` says where each table's
 * bytes are in `file`: always known for a frame, and for a page file this process staged.
 */
export interface StagedPage {
  /** Name in the staging folder. */
  readonly file: string;
  readonly parts?: readonly PartLayout[];
}

export interface PublishRequest {
  readonly target: FileTarget;
  readonly directory: string;
  readonly stagingDir: string;
  readonly batch: string;
  /** The batch's staged pages, in page order (pages without `parts` are whole files, read and decoded). */
  readonly pages: readonly StagedPage[];
  /** Every file in the staging folder that holds the batch's pages: removed once it is published. */
  readonly files: readonly string[];
  readonly marker: CsvFormat['marker'];
}

/**
 * Publishes one staged batch: one file per table (the table's head, then every page's rows in
 * order), each written under a temp name and renamed into the drop; then the folder is synced and
 * the marker written LAST (`<batch>.manifest.json` with files, row counts and sha256, or an empty
 * `<batch>.done`), so a consumer that waits for it never sees a batch in part. Then the staged
 * pages are removed. Every step can be redone: a crash anywhere is finished by publishing again
 * (same names, same bytes); a batch whose pages were already noted as published is only cleaned up.
 */
export async function publishBatch(request: PublishRequest): Promise<BatchFile[]> {
  const { target, directory, stagingDir, batch, pages } = request;
  const publishedNote = target.join(stagingDir, `${batch}${PUBLISHED_SUFFIX}`);
  if (await target.exists(publishedNote)) {
    await removePages(request, publishedNote);
    return [];
  }
  const files = target.readsWhileStaging ? await streamTables(request) : await spoolTables(request);
  await target.syncDir(directory);
  if (files.length > 0) {
    await writeBatchMarker(target, directory, batch, request.marker, files);
    await target.syncDir(directory);
  }
  await writeFileAtomic(target, stagingDir, `${batch}${PUBLISHED_SUFFIX}`, Buffer.alloc(0));
  await removePages(request, publishedNote);
  return files;
}

async function writeBatchMarker(target: FileTarget, directory: string, batch: string, marker: CsvFormat['marker'], files: readonly BatchFile[]): Promise<void> {
  if (marker === 'none') return;
  if (marker === 'done') {
    await writeFileAtomic(target, directory, `${batch}${BATCH_DONE_SUFFIX}`, Buffer.alloc(0));
    return;
  }
  const manifest = { batch, createdAt: new Date().toISOString(), rows: files.reduce((sum, f) => sum + f.rows, 0), files };
  await writeFileAtomic(target, directory, `${batch}${BATCH_MANIFEST_SUFFIX}`, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8'));
}

async function removePages(request: PublishRequest, publishedNote: string): Promise<void> {
  const { target, stagingDir, files } = request;
  for (const file of files) await target.removeIfExists(target.join(stagingDir, file));
  await target.syncDir(stagingDir);
  await target.removeIfExists(publishedNote);
}

interface TableEntry {
  readonly streams: Set<string>;
  readonly root: string;
  readonly key: readonly string[];
  rows: number;
}

/** The batch's tables in order of first appearance, with their streams and row counts. */
function noteParts(tables: Map<string, TableEntry>, parts: readonly TableInfo[]): void {
  for (const part of parts) {
    const entry = tables.get(part.table) ?? { streams: new Set<string>(), root: part.root, key: part.key, rows: 0 };
    for (const stream of part.streams) entry.streams.add(stream);
    entry.rows += part.rows;
    tables.set(part.table, entry);
  }
}

/** A page that is a file of its own, read whole and decoded. */
async function readPage(target: FileTarget, stagingDir: string, page: StagedPage): Promise<ChunkTable[]> {
  const file = target.join(stagingDir, page.file);
  return decodeChunk(await target.read(file, new AbortController().signal), target.describe(file));
}

/** Stages `content` as the table's batch file and renames it into the drop. */
async function publishTable(request: PublishRequest, table: string, entry: TableEntry, content: AsyncIterable<Uint8Array>): Promise<BatchFile> {
  const { target, directory, batch } = request;
  const file = batchDataFileName(batch, table);
  const staged: StagedFile = await target.stage(directory, file, content, new AbortController().signal);
  try {
    await target.commit(staged);
  } catch (error) {
    await target.discard(staged);
    throw error;
  }
  return { file, table, streams: [...entry.streams].sort(), root: entry.root, key: entry.key, rows: entry.rows, bytes: staged.bytes, sha256: staged.sha256 };
}

/**
 * A target whose reads may run inside an upload (a local folder): each table's file is streamed
 * from the staged pages straight into its temp file (hashed on the way, fsync'd, renamed), one
 * page in memory at a time. The pages are read once to count the rows, then once per table.
 */
async function streamTables(request: PublishRequest): Promise<BatchFile[]> {
  const { target, stagingDir, pages } = request;
  if (target.openRangeReader && pages.every((page) => page.parts)) return streamKnownTables(request);
  // Each page is consumed (its rows written) before the next is read: one buffer serves them all.
  let scratch: Buffer = Buffer.allocUnsafe(SCRATCH_BYTES);
  const read = async (page: StagedPage): Promise<ChunkTable[]> => {
    if (!target.readReusing) return readPage(target, stagingDir, page);
    const file = target.join(stagingDir, page.file);
    const content = await target.readReusing(file, scratch);
    // A page larger than the buffer came in a new one: keep that for the next pages.
    if (content.length > scratch.length) scratch = content;
    return decodeChunk(content, target.describe(file));
  };
  const tables = new Map<string, TableEntry>();
  for (const page of pages) noteParts(tables, await read(page));
  const files: BatchFile[] = [];
  for (const [table, entry] of tables) {
    if (entry.rows === 0) continue;
    files.push(await publishTable(request, table, entry, tableChunks(table, pages, read)));
  }
  return files;
}

/**
 * `streamTables` for pages this process staged: their layout is known, so no page is read to
 * count rows, and each table's file reads only that table's bytes of each page (one positioned
 * read instead of the whole page once per table).
 */
async function streamKnownTables(request: PublishRequest): Promise<BatchFile[]> {
  const { target, stagingDir, pages } = request;
  const tables = new Map<string, TableEntry>();
  for (const page of pages) noteParts(tables, page.parts!);
  let scratch: Buffer = Buffer.allocUnsafe(SCRATCH_BYTES);
  // One open file per page log (a batch's pages are in one or a few), for every table's reads.
  const readers = new Map<string, Promise<RangeReader>>();
  const readerOf = (file: string): Promise<RangeReader> => {
    let reader = readers.get(file);
    if (!reader) {
      reader = target.openRangeReader!(file);
      readers.set(file, reader);
    }
    return reader;
  };
  async function* chunks(table: string): AsyncGenerator<Buffer> {
    let started = false;
    for (const page of pages) {
      for (const part of page.parts!) {
        if (part.table !== table || part.rows === 0) continue;
        const file = target.join(stagingDir, page.file);
        const length = part.headBytes + part.bodyBytes;
        const bytes = await (await readerOf(file)).read(part.at, length, scratch);
        if (bytes.length > scratch.length) scratch = bytes;
        if (bytes.length !== length) throw new Error(`${target.describe(file)}: staged page is shorter than what was staged (table ${table})`);
        if (!started) {
          started = true;
          yield bytes.subarray(0, part.headBytes);
        }
        yield bytes.subarray(part.headBytes);
      }
    }
  }
  const files: BatchFile[] = [];
  try {
    for (const [table, entry] of tables) {
      if (entry.rows === 0) continue;
      files.push(await publishTable(request, table, entry, chunks(table)));
    }
  } finally {
    await Promise.all([...readers.values()].map((reader) => reader.then((r) => r.close(), () => undefined)));
  }
  return files;
}

/** The table's file: the head of its first part with rows, then every part's rows, in page order. */
async function* tableChunks(table: string, pages: readonly StagedPage[], read: (page: StagedPage) => Promise<ChunkTable[]>): AsyncGenerator<Buffer> {
  let started = false;
  for (const page of pages) {
    for (const part of await read(page)) {
      if (part.table !== table || part.rows === 0) continue;
      if (!started) {
        started = true;
        yield part.head;
      }
      yield part.body;
    }
  }
}

/**
 * A target whose reads and uploads share one transfer limit (SFTP `maxParallelTransfers`):
 * reading pages from inside an upload could wait forever. The staged pages are downloaded once,
 * one at a time, and each table's part appended to a local spool file (in the system temp
 * folder, removed afterwards); then each spool file is uploaded as a stream. Memory holds one
 * page and the file stream's buffer, whatever the batch's size.
 */
async function spoolTables(request: PublishRequest): Promise<BatchFile[]> {
  const { target, stagingDir, pages } = request;
  const spoolDir = await createSpoolDir();
  const spools = new Map<string, string>();
  const handles = new Map<string, FileHandle>();
  try {
    const tables = new Map<string, TableEntry>();
    for (const page of pages) {
      const parts = await readPage(target, stagingDir, page);
      noteParts(tables, parts);
      for (const part of parts) {
        if (part.rows === 0) continue;
        let handle = handles.get(part.table);
        if (!handle) {
          const file = path.join(spoolDir, `${handles.size}.csv`);
          handle = await openFile(file, 'wx', 0o600);
          handles.set(part.table, handle);
          spools.set(part.table, file);
          await writeAll(handle, part.head);
        }
        await writeAll(handle, part.body);
      }
    }
    for (const [table, handle] of handles) {
      handles.delete(table);
      await handle.close();
    }
    const files: BatchFile[] = [];
    for (const [table, entry] of tables) {
      const file = spools.get(table);
      if (entry.rows === 0 || !file) continue;
      files.push(await publishTable(request, table, entry, createReadStream(file)));
    }
    return files;
  } finally {
    for (const handle of handles.values()) await handle.close().catch(() => undefined);
    await rm(spoolDir, { recursive: true, force: true });
  }
}

async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
    if (bytesWritten <= 0) throw Object.assign(new Error(`wrote 0 of ${chunk.length - offset} bytes to a spool file`), { code: 'EIO' });
    offset += bytesWritten;
  }
}
