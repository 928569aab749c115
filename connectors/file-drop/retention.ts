import type { FileTarget } from './file-target.js';
import { batchFileOf, isOutputFile, TEMP_PREFIX } from './file-names.js';
import { removeMarkers } from './markers.js';

const DAY_MS = 86_400_000;

type Retention = { readonly maxAgeDays?: number; readonly maxFiles?: number };

/**
 * Deletes old published batches, whole: a batch's marker first (a consumer must never see a
 * manifest whose files are gone), then its files. A batch's age is its newest file's modification
 * time; `maxFiles` keeps the newest batches while their data files fit (a batch is never split).
 * Files of the layout before batches (`<table>__<batchId>.csv` with their markers) count as one
 * batch each. Never touches temp files, the staging folder, files it did not name, or `keep` (the
 * batch just published). Returns the names deleted.
 */
export async function applyRetention(
  target: FileTarget,
  directory: string,
  retention: Retention,
  keep: string,
  now: number = Date.now(),
): Promise<string[]> {
  const groups = new Map<string, { files: string[]; markers: string[]; dataFiles: number; mtime: number }>();
  for (const entry of await target.list(directory)) {
    if (!entry.isFile) continue;
    const batch = batchFileOf(entry.name);
    const id = batch?.batch ?? (isOutputFile(entry.name) ? `legacy:${entry.name}` : undefined);
    if (!id) continue;
    const group = groups.get(id) ?? { files: [], markers: [], dataFiles: 0, mtime: 0 };
    const isData = batch ? batch.table !== undefined : true;
    (isData ? group.files : group.markers).push(entry.name);
    if (isData) group.dataFiles += 1;
    group.mtime = Math.max(group.mtime, entry.mtimeMs);
    groups.set(id, group);
  }
  const batches = [...groups.entries()].map(([id, g]) => ({ id, ...g }));
  batches.sort((a, b) => b.mtime - a.mtime || (a.id < b.id ? 1 : -1));

  const doomed = new Set<string>();
  if (retention.maxAgeDays !== undefined) {
    const cutoff = now - retention.maxAgeDays * DAY_MS;
    for (const batch of batches) if (batch.mtime < cutoff) doomed.add(batch.id);
  }
  if (retention.maxFiles !== undefined) {
    // The protected batch counts against the limit first; older batches fill what is left.
    let kept = batches.find((b) => b.id === keep)?.dataFiles ?? 0;
    for (const batch of batches) {
      if (batch.id === keep || doomed.has(batch.id)) continue;
      if (kept + batch.dataFiles <= retention.maxFiles) kept += batch.dataFiles;
      else doomed.add(batch.id);
    }
  }
  const deleted: string[] = [];
  for (const batch of batches) {
    if (!doomed.has(batch.id) || batch.id === keep) continue;
    for (const name of batch.markers) if (await target.removeIfExists(target.join(directory, name))) deleted.push(name);
    for (const name of batch.files) {
      const full = target.join(directory, name);
      // Layout before batches: each data file had its own markers.
      if (batch.id.startsWith('legacy:')) await removeMarkers(target, full);
      if (await target.removeIfExists(full)) deleted.push(name);
    }
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
