import type { FileTarget } from './file-target.js';
import { isOutputFile, TEMP_PREFIX } from './file-names.js';
import { removeMarkers } from './markers.js';
import type { CsvFormat } from './format-options.js';

const DAY_MS = 86_400_000;

/**
 * Deletes old data and error files (with their markers). Temp files are never touched here, and
 * neither are the files of the batch just written (`keep`), even when `maxFiles` is smaller than
 * the number of tables in one batch. Returns the names deleted.
 */
export async function applyRetention(
  target: FileTarget,
  directory: string,
  retention: NonNullable<CsvFormat['retention']>,
  keep: ReadonlySet<string>,
  now: number = Date.now(),
): Promise<string[]> {
  const files = (await target.list(directory))
    .filter((entry) => entry.isFile && isOutputFile(entry.name))
    .map(({ name, mtimeMs }) => ({ name, mtime: mtimeMs }));
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
    const full = target.join(directory, name);
    // Marker first: a consumer must never see a marker whose file is gone.
    await removeMarkers(target, full);
    if (await target.removeIfExists(full)) deleted.push(name);
  }
  return deleted;
}

/** Temp files left by a crash (older than `olderThanMs`); removed at start-up. */
export async function removeStaleTempFiles(target: FileTarget, directory: string, olderThanMs: number, now: number = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await target.list(directory)) {
    if (!entry.name.startsWith(TEMP_PREFIX) || !entry.isFile || entry.mtimeMs >= now - olderThanMs) continue;
    try {
      if (await target.removeIfExists(target.join(directory, entry.name))) removed.push(entry.name);
    } catch {
      // Gone already, or not ours to delete: the next start-up tries again.
    }
  }
  return removed;
}
