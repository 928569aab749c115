/**
 * The plug-in contracts of freight-sync, published as `freight-sync/connector`. This folder imports
 * nothing else from `src/` (CI checks it): a connector depends on these types only, never on the
 * engine. See docs/connectors.md.
 */
export type { RecordBatch, RecordOp, SyncRecord } from './records.js';
export type { ContractLogFn, ContractLogger } from './logger.js';
export type { ReauthMark, StoredTokens, TokenStore } from './token-store.js';
export type {
  Cell,
  CompiledChild,
  CompiledColumn,
  CompiledParentKey,
  CompiledPath,
  CompiledTable,
  CompiledTransform,
  CompiledFallback,
  MapOptions,
  MapResult,
  MappedBatch,
  MappedTable,
  MappingProblem,
  MappingTransform,
  PathScope,
  PathSegment,
  RecordMappingError,
  Row,
  StreamMapper,
  StreamMapping,
} from './mapping.js';
export { META_COLUMNS, RAW_COLUMN } from './mapping.js';
export { BOOLEAN, columnKind, INTEGER, JSON_DOCUMENT, LONG_TEXT, TEXT, TIMESTAMP, type ColumnKind } from './column-kinds.js';
export {
  defineConnector,
  mappingRejections,
  type ColumnTypeChange,
  type CommandSource,
  type ConnectorCapabilities,
  type ConnectorCheckContext,
  type ConnectorIssue,
  type ConnectorContext,
  type ConnectorFactory,
  type ConnectorInstance,
  type DryRunResult,
  type FileStore,
  type FileToStore,
  type StoredFile,
  type InboundRequest,
  type InboundResult,
  type InboundUnit,
  type RecordSink,
  type SinkAck,
  type SinkRejection,
  type TableMigration,
  type SinkReadOptions,
  type SinkReader,
  type SinkRow,
  type WriterFence,
} from './connector.js';
