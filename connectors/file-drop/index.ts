/** Shared by every file-drop connector (`csv`, `sftp`): naming, CSV encoding, markers, retention, publishing. */
export { FileDropSink, type DropSinkDeps } from './drop-sink.js';
export { DropSinkReader, type DropReaderDeps } from './drop-reader.js';
export { LocalTarget } from './local-target.js';
export { writeFileAtomic, type FileEntry, type FileTarget, type StagedFile } from './file-target.js';
export { csvFormatShape, checkCsvFormat, type CsvFormat } from './format-options.js';
export {
  safeFileComponent,
  dataFileName,
  errorsFileName,
  isOutputFile,
  tempFileName,
  TEMP_PREFIX,
  DONE_SUFFIX,
  MANIFEST_SUFFIX,
  batchName,
  batchDataFileName,
  batchFileOf,
  BATCH_MANIFEST_SUFFIX,
  BATCH_DONE_SUFFIX,
  STAGING_DIR,
} from './file-names.js';
export { encodeCsv, latin1Check } from './encode-csv.js';
export { applyRetention, removeStaleTempFiles } from './retention.js';
export { removeMarkers } from './markers.js';
export { publishBatch, type BatchFile } from './publish-batch.js';

/** Temp files older than this at start-up are leftovers of a crash (no write takes an hour). */
export const STALE_TEMP_MS = 3_600_000;
