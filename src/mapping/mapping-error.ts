import { FreightSyncError } from '../util/errors.js';
import type { MappingProblem } from '../contracts/index.js';

/**
 * A record that could not be mapped. The message names stream, key, column and value, e.g.
 * `stream loads, key M000123, column created_at: cannot parse date "yesterday"`.
 */
export class MappingError extends FreightSyncError implements MappingProblem {
  readonly stream: string;
  readonly key: string;
  readonly table: string;
  readonly column: string;
  /** Where in the record a child row came from (`invoice[1].pricing[0]`); empty for the main table. */
  readonly element: string;
  readonly reason: string;

  constructor(details: { stream: string; key: string; table: string; column: string; element?: string; reason: string }) {
    const where = details.element ? ` (table ${details.table}, element ${details.element})` : '';
    super('MAPPING_FAILED', `stream ${details.stream}, key ${details.key}, column ${details.column}${where}: ${details.reason}`);
    this.stream = details.stream;
    this.key = details.key;
    this.table = details.table;
    this.column = details.column;
    this.element = details.element ?? '';
    this.reason = details.reason;
  }
}

export type { RecordMappingError } from '../contracts/mapping.js';

export function isMappingError(error: unknown): error is MappingError {
  return error instanceof MappingError;
}
