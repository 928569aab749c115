import { FreightSyncError } from '../util/errors.js';

/** A problem with the state store: unreadable database, unknown schema version, bad checkpoint. */
export class StateError extends FreightSyncError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
