import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Where a target that cannot read while it writes (SFTP) spools a batch's tables before uploading
 * them: a folder in the local temp folder, named with this process's pid. The folder is removed
 * when the publish ends; a process killed during a publish leaves it behind (a batch's data, up to
 * `maxBatchRows` rows per table), which `removeOrphanSpools` clears at the next start.
 */
const SPOOL_PREFIX = 'freight-sync-publish-';
const SPOOL_NAME = /^freight-sync-publish-(\d+)-[A-Za-z0-9]{6}$/;

export function createSpoolDir(tmp: string = os.tmpdir()): Promise<string> {
  return mkdtemp(path.join(tmp, `${SPOOL_PREFIX}${process.pid}-`));
}

/** Removes the spool folders of processes no longer running (never this one's, nor a live one's); returns their paths. */
export async function removeOrphanSpools(tmp: string = os.tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(tmp).catch(() => [] as string[])) {
    const pid = Number(SPOOL_NAME.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || running(pid)) continue;
    const dir = path.join(tmp, name);
    await rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/** Whether a process with this pid runs (one we may not signal runs too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
