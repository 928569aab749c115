import type { FileTarget, StagedFile } from './file-target.js';
import { writeFileAtomic } from './file-target.js';
import { DONE_SUFFIX, MANIFEST_SUFFIX } from './file-names.js';
import type { CsvFormat } from './format-options.js';

export interface ManifestInfo {
  readonly table: string;
  readonly stream: string;
  readonly batchId: string;
  readonly rows: number;
  readonly kind: 'data' | 'errors';
}

/** Removes any marker of a file, so a replaced file is never announced by its predecessor's marker. */
export async function removeMarkers(target: FileTarget, dataPath: string): Promise<void> {
  await target.removeIfExists(`${dataPath}${DONE_SUFFIX}`);
  await target.removeIfExists(`${dataPath}${MANIFEST_SUFFIX}`);
}

/** Writes the marker after the data file is in place: consumers may act as soon as it appears. */
export async function writeMarker(target: FileTarget, marker: CsvFormat['marker'], staged: StagedFile, info: ManifestInfo): Promise<void> {
  if (marker === 'none') return;
  const directory = target.dirname(staged.finalPath);
  const file = target.basename(staged.finalPath);
  if (marker === 'done') {
    await writeFileAtomic(target, directory, `${file}${DONE_SUFFIX}`, Buffer.alloc(0));
    return;
  }
  const manifest = {
    file,
    table: info.table,
    stream: info.stream,
    batchId: info.batchId,
    kind: info.kind,
    rows: info.rows,
    sha256: staged.sha256,
    bytes: staged.bytes,
    createdAt: new Date().toISOString(),
  };
  await writeFileAtomic(target, directory, `${file}${MANIFEST_SUFFIX}`, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8'));
}
