export { mapBatch, type MappedBatch, type MappedTable, type Row, type MapBatchOptions, type MapBatchResult } from './map-batch.js';
export { loadMapping, parseMapping, type LoadMappingOptions } from './load-mapping.js';
export { isStreamMapping, META_COLUMNS, RAW_COLUMN, type StreamMapping, type Cell } from './compile-mapping.js';
export { MappingError, isMappingError, type RecordMappingError } from './mapping-error.js';
export { STREAM_NAMES, isStreamName, type StreamName, defaultMappingsDir, findPackageRoot } from './default-mappings.js';
export { getPath, parsePath } from './path.js';
export type { MappingInput, MappingConfig, Transform } from './mapping-schema.js';
export { createStreamMapper } from './stream-mapper.js';
