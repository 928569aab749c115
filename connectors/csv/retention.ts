import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { removeIfExists } from './atomic-file.js';
import { isOutputFile, TEMP_PREFIX } from './file-names.js';
import { removeMarkers } from './markers.js';
import type { CsvOptions } from './options.js';

const DAY_MS = 86_400_000;

/**
 * Deletes old data and error files (with their markers). Temp files are never touched here, and
 * neither are the files of the batch just written (`keep`), even when `maxFiles` is smaller than
 * the number of tables in one batch. Returns the names deleted.
 */
export async function applyRetention(
  directory: string,
  retention: NonNullable<CsvOptions['retention']>,
  keep: ReadonlySet<string>,
  now: number = Date.now(),
): Promise<string[]> {
  const names = (await readdir(directory)).filter(isOutputFile);
  const files: { name: string; mtime: number }[] = [];
  for (const name of names) {
    try {
      files.push({ name, mtime: (await stat(path.join(directory, name))).mtimeMs });
    } catch {
      // Deleted concurrently (another retention pass): nothing to do.
    }
  }
  files.sort((a, b) => b.mtime - a.mtime || a.name.localeCompare(b.name));

  const doomed = new Set<string>();
  if (retention.maxAgeDays !== undefined) {
    const cutoff = now - retention.maxAgeDays * DAY_MS;
    for (const file of files) if (file.mtime < cutoff) doomed.add(file.name);
  }
  if (retention.maxFiles !== undefined) {
    // The protected files count against the limit first; older files fill what is left.
    let kept = files.filter((f) => keep.has(f.name)).length;
    for (const file of files) {
      if (keep.has(file.name) || doomed.has(file.name)) continue;
      if (kept < retention.maxFiles) kept += 1;
      else doomed.add(file.name);
    }
  }
  const deleted: string[] = [];
  for (const name of doomed) {
    if (keep.has(name)) continue;
    const full = path.join(directory, name);
    // Marker first: a consumer must never see a marker whose file is gone.
    await removeMarkers(full);
    if (await removeIfExists(full)) deleted.push(name);
  }
  return deleted;
}

/** Temp files left by a crash (older than `olderThanMs`); removed at start-up. */
export async function removeStaleTempFiles(directory: string, olderThanMs: number, now: number = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(directory)) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    const full = path.join(directory, name);
    try {
      if ((await stat(full)).mtimeMs < now - olderThanMs && (await removeIfExists(full))) removed.push(name);
    } catch {
      // Gone already.
    }
  }
  return removed;
}
