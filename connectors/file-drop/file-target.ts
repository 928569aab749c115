import { createHash, type Hash } from 'node:crypto';
/** What a file is staged from: bytes in memory (whole, or in parts written in order), or a stream. */
export type StageContent = Buffer | readonly Buffer[] | AsyncIterable<Uint8Array>;

/** One directory entry as a target lists it. */
export interface FileEntry {
  readonly name: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly isFile: boolean;
}

/** A file fully written under a temp name in its final directory, not yet visible under its name. */
export interface StagedFile {
  readonly tempPath: string;
  readonly finalPath: string;
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * Where a file drop or a file inbox lives: a local folder or a remote SFTP directory. The CSV
 * sink, markers, retention and the inbox source only speak this interface, so the file naming,
 * encoding and publishing rules exist once. Paths are the target's own (POSIX on SFTP).
 */
export interface FileTarget {
  /**
   * True when `read` may run while a `stage` of this target is in progress (a local folder): a
   * batch file is then streamed from the staged pages straight into its temp file. False when
   * reads and uploads share one transfer limit (SFTP `maxParallelTransfers`), where a read inside
   * an upload could wait forever: the file is spooled to a local temp file first.
   */
  readonly readsWhileStaging: boolean;
  /** Human-readable location for messages and logs: `/abs/dir` or `sftp://user@host:22/dir`. */
  describe(path: string): string;
  join(dir: string, name: string): string;
  dirname(path: string): string;
  basename(path: string): string;
  /** Creates the directory and its parents when missing. */
  ensureDir(dir: string, signal?: AbortSignal): Promise<void>;
  /** Entries of a directory; throws when the directory does not exist. */
  list(dir: string): Promise<FileEntry[]>;
  /**
   * Optional: only the names in a directory (`list` without size, time and kind). The CSV sink
   * reads the drop's names each time it takes the writer lock — once per published batch, so once
   * per webhook batch — and on a local folder `list` costs a `stat` per file: a drop holding a few
   * thousand files cost every batch as many stats, a cost growing with the drop.
   */
  listNames?(dir: string): Promise<string[]>;
  /**
   * Writes `content` under a temp name in `dir` (same directory, so the commit is an atomic
   * rename) and makes it durable. An abort or error removes the temp file (best effort) and never
   * creates anything under the final name. A stream is written as it arrives, never held whole.
   */
  stage(dir: string, name: string, content: StageContent, signal: AbortSignal): Promise<StagedFile>;
  /** Atomically replaces the final file with the staged one. */
  commit(staged: StagedFile): Promise<void>;
  /** Removes a staged temp file; never throws. */
  discard(staged: StagedFile): Promise<void>;
  /** Atomic move within the target, replacing `to` when it exists. */
  move(from: string, to: string): Promise<void>;
  read(path: string, signal: AbortSignal): Promise<Buffer>;
  /**
   * Optional: reads a whole file into `scratch` when it fits (else into a new buffer) and returns
   * the bytes read — a view valid only until `scratch` is used again. Publishing a batch reads
   * every staged page; fresh buffers there are freed only when the garbage collector gets to them.
   */
  readReusing?(path: string, scratch: Buffer): Promise<Buffer>;
  /**
   * Optional: opens a file for reads of byte ranges (RangeReader). Publishing reads each table's
   * part of a page this process staged (it knows where the part is) instead of the whole page once
   * per table, and a page log is scanned frame by frame; one open file serves all of those reads.
   */
  openRangeReader?(path: string): Promise<RangeReader>;
  exists(path: string): Promise<boolean>;
  /** Deletes a file; false when it did not exist. */
  removeIfExists(path: string): Promise<boolean>;
  /** Makes renames and unlinks in `dir` durable where the target can (no-op over SFTP). */
  syncDir(dir: string): Promise<void>;
  /**
   * Optional: creates `name` in `dir` (it must not exist) as a file only ever appended to, its
   * directory entry made durable before this resolves. The CSV sink stages a batch's pages in one
   * such file where the target has it (a local folder): per page one write and one fdatasync
   * instead of a temp file, its fsync, a rename and a folder fsync.
   */
  openAppendLog?(dir: string, name: string): Promise<AppendLog>;
  /**
   * Creates `name` in `dir` with `content` only if no file of that name exists: true when this call
   * created it, false when it was there already. Atomic against other writers (a lock file).
   */
  createExclusive(dir: string, name: string, content: Buffer): Promise<boolean>;
}

/** A file open for reads of byte ranges (see `FileTarget.openRangeReader`). */
export interface RangeReader {
  /**
   * Reads `length` bytes at `position` into `scratch` when they fit (else into a new buffer) and
   * returns them — a view valid only until `scratch` is used again; fewer when the file is shorter.
   */
  read(position: number, length: number, scratch: Buffer): Promise<Buffer>;
  /** Closes the file; never throws. */
  close(): Promise<void>;
}

/** A file written only at its end, each append durable before it resolves (see `FileTarget.openAppendLog`). */
export interface AppendLog {
  /** The file's name in its directory. */
  readonly name: string;
  /** Bytes appended and synced so far: the file's length as far as anyone may rely on. */
  readonly size: number;
  /** False once a failed append could not be cut back off the file: nothing more may be appended to it. */
  readonly usable: boolean;
  /**
   * Writes `parts` at the end and fdatasyncs them; resolves with the offset they start at. When
   * it fails the file is cut back to `size` (or, if even that fails, the log is no longer `usable`).
   */
  append(parts: readonly Buffer[]): Promise<number>;
  /** Closes the file; never throws. */
  close(): Promise<void>;
}

/** Stage then commit; for small files written after the data (markers, result files). */
export async function writeFileAtomic(target: FileTarget, dir: string, name: string, content: Buffer, signal: AbortSignal = new AbortController().signal): Promise<StagedFile> {
  const staged = await target.stage(dir, name, content, signal);
  try {
    await target.commit(staged);
  } catch (error) {
    await target.discard(staged);
    throw error;
  }
  return staged;
}

/** Running sha256 and byte count of staged content; `sourceError` is what the content stream itself threw. */
export interface StageDigest {
  hash: Hash;
  bytes: number;
  sourceError?: unknown;
}

/**
 * `content` as chunks, counted into `digest`. An error of the content stream (a download that
 * broke off, a file over its size limit) is kept in `digest.sourceError` so the target rethrows it
 * as is instead of reporting it as a failed write.
 */
export async function* hashedChunks(content: StageContent, digest: StageDigest): AsyncGenerator<Buffer> {
  const chunks: AsyncIterator<Uint8Array> | Iterator<Uint8Array> = Buffer.isBuffer(content)
    ? [content][Symbol.iterator]()
    : isBufferList(content)
      ? content[Symbol.iterator]()
      : content[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await chunks.next();
    } catch (error) {
      digest.sourceError = error;
      throw error;
    }
    if (next.done) return;
    const chunk = next.value;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    digest.hash.update(buffer);
    digest.bytes += buffer.length;
    yield buffer;
  }
}

/**
 * The staged file of content that was in memory: its sha256 is computed when first read. Most
 * such files are staged pages of the CSV sink, whose digest nobody reads; hashing each ~400 KB page
 * as it was written was ~0.35 ms of CPU per page. The parts are kept for that: callers stage fresh
 * buffers and never change them afterwards.
 */
export function stagedFromMemory(tempPath: string, finalPath: string, parts: readonly Buffer[]): StagedFile {
  let sha256: string | undefined;
  return {
    tempPath,
    finalPath,
    bytes: parts.reduce((sum, part) => sum + part.length, 0),
    get sha256(): string {
      if (sha256 === undefined) {
        const hash = createHash('sha256');
        for (const part of parts) hash.update(part);
        sha256 = hash.digest('hex');
      }
      return sha256;
    },
  };
}

export const isBufferList = (content: StageContent): content is readonly Buffer[] => Array.isArray(content);
