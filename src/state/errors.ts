import { FreightSyncError } from '../util/errors.js';

/** A problem with the state store: unreadable database, unknown schema version, bad checkpoint. */
export class StateError extends FreightSyncError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

export function isStateError(error: unknown): error is StateError {
  return error instanceof StateError;
}
