import { createHash } from 'node:crypto';
import path from 'node:path';
import pLimit from 'p-limit';
import type { SFTPWrapper } from 'ssh2';
import type { ContractLogger as Logger } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { hashedChunks, type FileEntry, type StageContent, type StageDigest, type FileTarget, type StagedFile } from '../file-drop/file-target.js';
import { tempFileName } from '../file-drop/file-names.js';
import { SftpOperationError } from './errors.js';
import type { Connection, SftpSession } from './session.js';

/** Creates of a name freed again between the failed rename and the look at it (see createExclusive). */
const CREATE_EXCLUSIVE_ATTEMPTS = 5;

/** Bytes per SFTP write request; OpenSSH accepts up to 256 KiB, every server at least 32 KiB. */
const CHUNK = 32_768;
/** Write requests in flight per file: hides the round trip without flooding the channel window. */
const WINDOW = 16;
/** SSH_FX_NO_SUCH_FILE */
const NO_SUCH_FILE = 2;

const posix = path.posix;

type Start<T> = (callback: (error: Error | undefined | null, value?: T) => void) => void;
type Guard = Connection['guard'];

function request<T = void>(start: Start<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    try {
      start((error, value) => (error ? reject(error) : resolve(value as T)));
    } catch (error) {
      // ssh2 throws synchronously when the channel is gone or an extension is missing.
      reject(error);
    }
  });
}

/**
 * A remote directory over SFTP. Uploads go to `.tmp-<name>-<random>` in the final directory, are
 * fsync'd (`fsync@openssh.com` when offered) and closed; only then `posixRename`
 * (`posix-rename@openssh.com`) replaces the final name, atomically. At most `parallel` uploads or
 * downloads run at once.
 */
export class SftpTarget implements FileTarget {
  readonly readsWhileStaging = false;
  private readonly transfers: ReturnType<typeof pLimit>;
  private warnedNoFsync = false;

  constructor(
    private readonly session: SftpSession,
    parallel: number,
    private readonly logger: Logger,
  ) {
    this.transfers = pLimit(Math.max(1, parallel));
  }

  describe(remotePath: string): string {
    return `sftp://${this.session.server}${remotePath.startsWith('/') ? '' : '/~/'}${remotePath}`;
  }

  join(dir: string, name: string): string {
    return posix.join(dir, name);
  }

  dirname(file: string): string {
    return posix.dirname(file);
  }

  basename(file: string): string {
    return posix.basename(file);
  }

  /**
   * Creates the directory and its missing parents one level at a time. Each level tolerates a
   * directory another writer made in between: replicas starting together on a fresh drop race to
   * create the same parents, and a library's recursive mkdir gives up at the first parent the
   * other replica made first (fresh-clone CI: "mkdir … Bad path … permission denied").
   */
  async ensureDir(dir: string, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    if ((await this.typeOf(dir)) === 'd') return;
    const parent = posix.dirname(dir);
    if (parent !== dir && parent !== '.') await this.ensureDir(parent, signal);
    const { sftp, guard } = await this.session.connection(signal);
    try {
      await guard(request((cb) => sftp.mkdir(dir, cb)));
    } catch (error) {
      // Another writer may have created it in between.
      if ((await this.typeOf(dir)) !== 'd') throw this.failed('mkdir', dir, error);
    }
  }

  async list(dir: string): Promise<FileEntry[]> {
    const { client, guard } = await this.session.connection();
    try {
      const entries = await guard(client.list(dir));
      return entries.map((e) => ({ name: e.name, size: e.size, mtimeMs: e.modifyTime, isFile: e.type === '-' }));
    } catch (error) {
      throw this.failed('list', dir, error);
    }
  }

  stage(dir: string, name: string, content: StageContent, signal: AbortSignal): Promise<StagedFile> {
    return this.transfers(async () => {
      throwIfAborted(signal);
      const { sftp, guard } = await this.session.connection(signal);
      const call = <T = void>(start: Start<T>) => guard(request(start));
      const tempPath = posix.join(dir, tempFileName(name));
      const digest: StageDigest = { hash: createHash('sha256'), bytes: 0 };
      let handle: Buffer | undefined;
      try {
        handle = await call<Buffer>((cb) => sftp.open(tempPath, 'wx', { mode: 0o644 }, cb));
        for await (const chunk of hashedChunks(content, digest)) await this.writeAll(sftp, guard, handle, chunk, digest.bytes - chunk.length, signal);
        throwIfAborted(signal);
        await this.fsync(sftp, guard, handle);
        const open = handle;
        handle = undefined;
        await call((cb) => sftp.close(open, cb));
      } catch (error) {
        if (handle) await call((cb) => sftp.close(handle!, cb)).catch(() => undefined);
        // Best effort: when the connection itself broke, the temp file stays until the start-up clean-up.
        await this.unlinkQuietly(sftp, guard, tempPath);
        throw signal.aborted || error === digest.sourceError ? error : this.failed('upload', tempPath, error);
      }
      return { tempPath, finalPath: posix.join(dir, name), bytes: digest.bytes, sha256: digest.hash.digest('hex') };
    });
  }

  async commit(staged: StagedFile): Promise<void> {
    await this.move(staged.tempPath, staged.finalPath);
  }

  async discard(staged: StagedFile): Promise<void> {
    try {
      const { sftp, guard } = await this.session.connection();
      await this.unlinkQuietly(sftp, guard, staged.tempPath);
    } catch {
      // No connection: the start-up clean-up removes the temp file later.
    }
  }

  /** `posix-rename@openssh.com`: replaces `to` atomically (plain SFTP rename fails when `to` exists). */
  async move(from: string, to: string): Promise<void> {
    const { client, guard } = await this.session.connection();
    try {
      await guard(client.posixRename(from, to));
    } catch (error) {
      throw this.failed(`rename to ${to}:`, from, error);
    }
  }

  /** Uploaded under a temp name, then moved with the plain SFTP rename, which fails when the name exists. */
  /**
   * An SFTP rename fails (a bare "Failure") while the target exists. The holder may let go of it
   * between that failure and the look that follows (replicas starting together on one drop, each
   * taking and releasing the writer lock for its start-up recovery): then the name is free and
   * the create is tried again, not reported as an error (that made a replica's start-up fail).
   */
  async createExclusive(dir: string, name: string, content: Buffer): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const staged = await this.stage(dir, name, content, new AbortController().signal);
      const { client, guard } = await this.session.connection();
      try {
        await guard(client.rename(staged.tempPath, staged.finalPath));
        return true;
      } catch (error) {
        await this.discard(staged);
        if (await this.exists(staged.finalPath)) return false;
        // A few tries: a rename that keeps failing with the name free is a real failure.
        if (attempt >= CREATE_EXCLUSIVE_ATTEMPTS) throw this.failed(`rename to ${staged.finalPath}:`, staged.tempPath, error);
      }
    }
  }

  read(file: string, signal: AbortSignal): Promise<Buffer> {
    return this.transfers(async () => {
      throwIfAborted(signal);
      const { client, guard } = await this.session.connection(signal);
      try {
        return (await guard(client.get(file))) as Buffer;
      } catch (error) {
        throw this.failed('download', file, error);
      }
    });
  }

  async exists(file: string): Promise<boolean> {
    return (await this.typeOf(file)) !== false;
  }

  private async typeOf(file: string): Promise<false | 'd' | '-' | 'l'> {
    const { client, guard } = await this.session.connection();
    try {
      return await guard(client.exists(file));
    } catch (error) {
      throw this.failed('stat', file, error);
    }
  }

  async removeIfExists(file: string): Promise<boolean> {
    const { sftp, guard } = await this.session.connection();
    try {
      await guard(request((cb) => sftp.unlink(file, cb)));
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === NO_SUCH_FILE) return false;
      throw this.failed('delete', file, error);
    }
  }

  async syncDir(): Promise<void> {
    // SFTP has no directory fsync; OpenSSH's rename is durable once the server's file system commits it.
  }

  /** Writes `content` at file position `position` (a stream is staged chunk after chunk). */
  private async writeAll(sftp: SFTPWrapper, guard: Guard, handle: Buffer, content: Buffer, position: number, signal: AbortSignal): Promise<void> {
    for (let offset = 0; offset < content.length; offset += CHUNK * WINDOW) {
      throwIfAborted(signal);
      const writes: Promise<void>[] = [];
      for (let at = offset; at < Math.min(content.length, offset + CHUNK * WINDOW); at += CHUNK) {
        const length = Math.min(CHUNK, content.length - at);
        writes.push(request((cb) => sftp.write(handle, content, at, length, position + at, cb)));
      }
      await guard(Promise.all(writes));
    }
  }

  private async fsync(sftp: SFTPWrapper, guard: Guard, handle: Buffer): Promise<void> {
    try {
      await guard(request((cb) => sftp.ext_openssh_fsync(handle, cb)));
    } catch (error) {
      if (!/not support/i.test(String((error as Error).message))) throw error;
      if (!this.warnedNoFsync) {
        this.warnedNoFsync = true;
        this.logger.warn({ server: this.session.server }, 'sftp server does not offer fsync@openssh.com; uploads are renamed without a server-side fsync');
      }
    }
  }

  private async unlinkQuietly(sftp: SFTPWrapper, guard: Guard, file: string): Promise<void> {
    await guard(request((cb) => sftp.unlink(file, cb))).catch(() => undefined);
  }

  private failed(operation: string, remotePath: string, cause: unknown): SftpOperationError {
    return new SftpOperationError(this.session.server, operation, this.describe(remotePath), cause);
  }
}
