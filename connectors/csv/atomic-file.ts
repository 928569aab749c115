import { randomBytes, createHash } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { TEMP_PREFIX } from './file-names.js';

/** A file fully written and fsync'd under a temp name in its final directory, not yet visible. */
export interface StagedFile {
  readonly tempPath: string;
  readonly finalPath: string;
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * Writes `content` to `.tmp-<random>-<name>` in `directory` and fsyncs it. The temp file lives in
 * the same directory so the later rename is atomic (same file system), and starts with a dot so
 * consumers that ignore hidden files never pick it up.
 */
export async function stageFile(directory: string, name: string, content: Buffer): Promise<StagedFile> {
  const tempPath = path.join(directory, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${name}`);
  const handle = await open(tempPath, 'wx', 0o644);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(tempPath).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return {
    tempPath,
    finalPath: path.join(directory, name),
    bytes: content.length,
    sha256: createHash('sha256').update(content).digest('hex'),
  };
}

/** Atomically replaces the final file with the staged one. */
export async function commitStaged(staged: StagedFile): Promise<void> {
  await rename(staged.tempPath, staged.finalPath);
}

export async function discardStaged(staged: StagedFile): Promise<void> {
  await unlink(staged.tempPath).catch(() => undefined);
}

/** Stage then commit; for small files written after the data (markers). */
export async function writeFileAtomic(directory: string, name: string, content: Buffer): Promise<StagedFile> {
  const staged = await stageFile(directory, name, content);
  try {
    await commitStaged(staged);
  } catch (error) {
    await discardStaged(staged);
    throw error;
  }
  return staged;
}

/** Makes renames and unlinks in `directory` durable. Some platforms cannot fsync a directory. */
export async function fsyncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

export async function removeIfExists(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
