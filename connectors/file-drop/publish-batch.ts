import type { FileTarget } from './file-target.js';
import { writeFileAtomic } from './file-target.js';
import { BATCH_DONE_SUFFIX, BATCH_MANIFEST_SUFFIX, batchDataFileName } from './file-names.js';
import type { CsvFormat } from './format-options.js';
import { decodeChunk, type ChunkTable, type TableInfo } from './page-chunk.js';

/** Suffix of the staging note saying a batch is fully published (its pages may go). */
export const PUBLISHED_SUFFIX = '.published';
/** Staged pages kept in memory while their batch is assembled; beyond this they are read again per table. */
const CACHE_BYTES = 64 * 1024 * 1024;

export interface BatchFile extends TableInfo {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface PublishRequest {
  readonly target: FileTarget;
  readonly directory: string;
  readonly stagingDir: string;
  readonly batch: string;
  /** Names of the batch's staged pages in the staging folder, in staging order. */
  readonly pages: readonly string[];
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
  const read = pageReader(request);
  const tables = new Map<string, { streams: Set<string>; root: string; key: readonly string[]; rows: number }>();
  for (const page of pages) {
    for (const part of await read(page)) {
      const entry = tables.get(part.table) ?? { streams: new Set<string>(), root: part.root, key: part.key, rows: 0 };
      for (const stream of part.streams) entry.streams.add(stream);
      entry.rows += part.rows;
      tables.set(part.table, entry);
    }
  }
  const files: BatchFile[] = [];
  for (const [table, entry] of tables) {
    if (entry.rows === 0) continue;
    const file = batchDataFileName(batch, table);
    const staged = await target.stage(directory, file, await tableContent(table, pages, read), new AbortController().signal);
    try {
      await target.commit(staged);
    } catch (error) {
      await target.discard(staged);
      throw error;
    }
    files.push({ file, table, streams: [...entry.streams].sort(), root: entry.root, key: entry.key, rows: entry.rows, bytes: staged.bytes, sha256: staged.sha256 });
  }
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
  const { target, stagingDir, pages } = request;
  for (const page of pages) await target.removeIfExists(target.join(stagingDir, page));
  await target.syncDir(stagingDir);
  await target.removeIfExists(publishedNote);
}

/**
 * The table's file content, assembled before it is staged: a target's reads and uploads share one
 * transfer limit (SFTP `maxParallelTransfers`), so reading pages from inside an upload could wait forever.
 */
async function tableContent(table: string, pages: readonly string[], read: (page: string) => Promise<ChunkTable[]>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const page of pages) {
    for (const part of await read(page)) {
      if (part.table !== table || part.rows === 0) continue;
      if (parts.length === 0) parts.push(part.head);
      parts.push(part.body);
    }
  }
  return Buffer.concat(parts);
}

/** Reads staged pages, keeping them in memory up to a budget (a batch has one file per table to build). */
function pageReader(request: PublishRequest): (page: string) => Promise<ChunkTable[]> {
  const { target, stagingDir } = request;
  const cache = new Map<string, ChunkTable[]>();
  let cached = 0;
  return async (page) => {
    const hit = cache.get(page);
    if (hit) return hit;
    const path = target.join(stagingDir, page);
    const content = await target.read(path, new AbortController().signal);
    const tables = decodeChunk(content, target.describe(path));
    if (cached + content.length <= CACHE_BYTES) {
      cache.set(page, tables);
      cached += content.length;
    }
    return tables;
  };
}
