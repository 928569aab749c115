import { createHash } from 'node:crypto';
import { access, link, mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { throwIfAborted } from '../../src/util/abort.js';
import { asStorageError } from '../../src/util/storage-errors.js';
import { hashedChunks, isBufferList, stagedFromMemory, type AppendLog, type FileEntry, type StageContent, type StageDigest, type FileTarget, type RangeReader, type StagedFile } from './file-target.js';
import { tempFileName } from './file-names.js';

const WHAT = 'file drop';

/** Runs a file operation; a full disk or read-only folder becomes an error naming `location`. */
async function guarded<T>(location: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStorageError(error, WHAT, location);
  }
}

/**
 * A local folder: temp file written and fsync'd, `rename` over the final name, directory fsync'd.
 * A full disk, read-only mount or forbidden folder is reported as such, with the path.
 */
export class LocalTarget implements FileTarget {
  readonly readsWhileStaging = true;
  describe(file: string): string {
    return file;
  }

  join(dir: string, name: string): string {
    return path.join(dir, name);
  }

  dirname(file: string): string {
    return path.dirname(file);
  }

  basename(file: string): string {
    return path.basename(file);
  }

  async ensureDir(dir: string): Promise<void> {
    await guarded(dir, () => mkdir(dir, { recursive: true }));
  }

  async list(dir: string): Promise<FileEntry[]> {
    const entries: FileEntry[] = [];
    for (const name of await readdir(dir)) {
      try {
        const info = await stat(path.join(dir, name));
        entries.push({ name, size: info.size, mtimeMs: info.mtimeMs, isFile: info.isFile() });
      } catch (error) {
        // Removed between readdir and stat (a concurrent retention pass or consumer).
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return entries;
  }

  async listNames(dir: string): Promise<string[]> {
    return readdir(dir);
  }

  async stage(dir: string, name: string, content: StageContent, signal: AbortSignal): Promise<StagedFile> {
    throwIfAborted(signal);
    const tempPath = path.join(dir, tempFileName(name));
    const handle = await guarded(tempPath, () => open(tempPath, 'wx', 0o644));
    const digest: StageDigest = { hash: createHash('sha256'), bytes: 0 };
    const inMemory = isBufferList(content) ? content : Buffer.isBuffer(content) ? [content] : undefined;
    try {
      if (inMemory) {
        // Parts in memory (a staged page: index, then each table's head and body) go down in one
        // call: every file operation is a round trip through the thread pool.
        await writeAllParts(handle, inMemory);
      } else {
        for await (const chunk of hashedChunks(content, digest)) {
          throwIfAborted(signal);
          await writeFully(handle, chunk);
        }
      }
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(tempPath).catch(() => undefined);
      throw error === digest.sourceError ? error : asStorageError(error, WHAT, tempPath);
    }
    await guarded(tempPath, () => handle.close());
    const finalPath = path.join(dir, name);
    return inMemory ? stagedFromMemory(tempPath, finalPath, inMemory) : { tempPath, finalPath, bytes: digest.bytes, sha256: digest.hash.digest('hex') };
  }

  async commit(staged: StagedFile): Promise<void> {
    await guarded(staged.finalPath, () => rename(staged.tempPath, staged.finalPath));
  }

  async discard(staged: StagedFile): Promise<void> {
    await unlink(staged.tempPath).catch(() => undefined);
  }

  async move(from: string, to: string): Promise<void> {
    await guarded(to, () => rename(from, to));
  }

  async read(file: string): Promise<Buffer> {
    return readFile(file);
  }

  async readReusing(file: string, scratch: Buffer): Promise<Buffer> {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const into = size <= scratch.length ? scratch.subarray(0, size) : Buffer.allocUnsafe(size);
      let at = 0;
      while (at < size) {
        const { bytesRead } = await handle.read(into, at, size - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      // Shorter than its size said (truncated meanwhile): what was there.
      return into.subarray(0, at);
    } finally {
      await handle.close();
    }
  }

  async openRangeReader(file: string): Promise<RangeReader> {
    const handle = await open(file, 'r');
    return {
      async read(position: number, length: number, scratch: Buffer): Promise<Buffer> {
        const into = length <= scratch.length ? scratch.subarray(0, length) : Buffer.allocUnsafe(length);
        let at = 0;
        while (at < length) {
          const { bytesRead } = await handle.read(into, at, length - at, position + at);
          if (bytesRead === 0) break;
          at += bytesRead;
        }
        return into.subarray(0, at);
      },
      close: () => handle.close().catch(() => undefined),
    };
  }

  async exists(file: string): Promise<boolean> {
    try {
      await access(file);
      return true;
    } catch {
      return false;
    }
  }

  async removeIfExists(file: string): Promise<boolean> {
    try {
      await unlink(file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw asStorageError(error, WHAT, file);
    }
  }

  async openAppendLog(dir: string, name: string): Promise<AppendLog> {
    const file = path.join(dir, name);
    const handle = await guarded(file, () => open(file, 'wx', 0o644));
    try {
      // The new name must survive a crash before the first page in it is acknowledged.
      await guarded(dir, () => this.syncDir(dir));
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(file).catch(() => undefined);
      throw error;
    }
    return new LocalAppendLog(handle, file, name);
  }

  /** Written whole under a temp name, then hard-linked: `link` fails when the name exists, so the file appears complete or not at all. */
  async createExclusive(dir: string, name: string, content: Buffer): Promise<boolean> {
    const staged = await this.stage(dir, name, content, new AbortController().signal);
    try {
      await link(staged.tempPath, staged.finalPath);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw asStorageError(error, WHAT, staged.finalPath);
    } finally {
      await this.discard(staged);
    }
  }

  /** Some platforms cannot fsync a directory; that is not an error there. */
  async syncDir(dir: string): Promise<void> {
    let handle;
    try {
      handle = await open(dir, 'r');
      await handle.sync();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error;
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }
}

/** An append-only file of a local folder: positioned writes at its synced length, then fdatasync (the length is metadata fdatasync flushes). */
class LocalAppendLog implements AppendLog {
  size = 0;
  usable = true;

  constructor(
    private readonly handle: FileHandle,
    private readonly file: string,
    readonly name: string,
  ) {}

  async append(parts: readonly Buffer[]): Promise<number> {
    if (!this.usable) throw new Error(`${this.file}: a failed append could not be undone; nothing more is appended to this file`);
    const at = this.size;
    try {
      const written = await writeAllParts(this.handle, parts, at);
      await this.handle.datasync();
      this.size = at + written;
      return at;
    } catch (error) {
      try {
        // Whatever of the failed append reached the file goes: the next append starts at a frame boundary.
        await this.handle.truncate(at);
        await this.handle.datasync();
      } catch {
        this.usable = false;
      }
      throw asStorageError(error, WHAT, this.file);
    }
  }

  async close(): Promise<void> {
    this.usable = false;
    await this.handle.close().catch(() => undefined);
  }
}

/**
 * `FileHandle.write` may write only part of a buffer (a disk filling up answers with fewer bytes
 * before it answers ENOSPC): write the rest until all of it is down, or the error comes.
 */
async function writeFully(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
    if (bytesWritten <= 0) throw Object.assign(new Error(`wrote 0 of ${chunk.length - offset} bytes`), { code: 'EIO' });
    offset += bytesWritten;
  }
}

/**
 * `writev` of every part (at `position` when given, else at the file's position), continuing after
 * a partial write like `writeFully`; resolves with the bytes written.
 */
export async function writeAllParts(handle: FileHandle, parts: readonly Buffer[], position?: number): Promise<number> {
  let rest = parts.filter((part) => part.length > 0);
  let written = 0;
  while (rest.length > 0) {
    const wanted = rest.reduce((sum, part) => sum + part.length, 0);
    const { bytesWritten } = await handle.writev(rest, position === undefined ? undefined : position + written);
    if (bytesWritten <= 0) throw Object.assign(new Error(`wrote 0 of ${wanted} bytes`), { code: 'EIO' });
    written += bytesWritten;
    if (bytesWritten >= wanted) return written;
    let skip = bytesWritten;
    while (skip >= rest[0]!.length) skip -= rest.shift()!.length;
    rest = [rest[0]!.subarray(skip), ...rest.slice(1)];
  }
  return written;
}
