import path from 'node:path';
import { writeFileAtomic, removeIfExists, type StagedFile } from './atomic-file.js';
import { DONE_SUFFIX, MANIFEST_SUFFIX } from './file-names.js';
import type { CsvOptions } from './options.js';

export interface ManifestInfo {
  readonly table: string;
  readonly stream: string;
  readonly batchId: string;
  readonly rows: number;
  readonly kind: 'data' | 'errors';
}

/** Removes any marker of a file, so a replaced file is never announced by its predecessor's marker. */
export async function removeMarkers(dataPath: string): Promise<void> {
  await removeIfExists(`${dataPath}${DONE_SUFFIX}`);
  await removeIfExists(`${dataPath}${MANIFEST_SUFFIX}`);
}

/** Writes the marker after the data file is in place: consumers may act as soon as it appears. */
export async function writeMarker(marker: CsvOptions['marker'], staged: StagedFile, info: ManifestInfo): Promise<void> {
  if (marker === 'none') return;
  const directory = path.dirname(staged.finalPath);
  const file = path.basename(staged.finalPath);
  if (marker === 'done') {
    await writeFileAtomic(directory, `${file}${DONE_SUFFIX}`, Buffer.alloc(0));
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
  await writeFileAtomic(directory, `${file}${MANIFEST_SUFFIX}`, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8'));
}
