import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireService } from './services.js';

/**
 * A small tmpfs of its own, to make a disk really fill up or really turn read-only (root only:
 * `mount -t tmpfs`). `available` is false when mounting is not permitted (then the tests skip with
 * a warning, or fail under CI=true like any missing service).
 */
export interface TinyFs {
  readonly dir: string;
  readOnly(): void;
  unmount(): void;
}

export function mountTinyFs(label: string, sizeKb: number): TinyFs | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `freight-sync-tinyfs-${label}-`));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    requireService('a tmpfs mount (needs root)', { ok: false, reason: String((error as { stderr?: Buffer }).stderr ?? error).trim() });
    return undefined;
  }
  return {
    dir,
    // Only works while no file on it is open for writing.
    readOnly: () => execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' }),
    unmount: () => {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
