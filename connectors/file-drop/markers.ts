import type { FileTarget } from './file-target.js';
import { DONE_SUFFIX, MANIFEST_SUFFIX } from './file-names.js';

/** Removes any per-file marker of the layout before batches (`<file>.done`, `<file>.manifest.json`), so a replaced file is never announced by its predecessor's marker. */
export async function removeMarkers(target: FileTarget, dataPath: string): Promise<void> {
  await target.removeIfExists(`${dataPath}${DONE_SUFFIX}`);
  await target.removeIfExists(`${dataPath}${MANIFEST_SUFFIX}`);
}
