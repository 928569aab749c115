import { FreightSyncError } from '../../src/util/errors.js';

/** A file inbox operation failed; the message names the unit and the folder. */
export class InboxError extends FreightSyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INBOX_FAILED', message, options);
  }
}

export function isInboxError(error: unknown): error is InboxError {
  return error instanceof InboxError;
}
