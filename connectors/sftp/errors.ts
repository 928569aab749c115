import { FreightSyncError } from '../../src/util/errors.js';

/** Base of the SFTP connector's errors; the message names the server (`user@host:port`) and the path. */
export class SftpError extends FreightSyncError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The server presented a key other than the pinned one: never retried, never ignored. */
export class HostKeyMismatchError extends SftpError {
  constructor(
    readonly server: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      'SFTP_HOST_KEY_MISMATCH',
      `sftp ${server}: host key mismatch: the server presented ${actual}, but hostKeySha256 pins ${expected}. ` +
        'Someone may be intercepting the connection, or the server key was changed: check with the server admin before updating the pin.',
    );
  }
}

/** Wrong password or key: never retried (retrying could lock the account). */
export class SftpAuthError extends SftpError {
  constructor(server: string, methods: string, cause: unknown) {
    super('SFTP_AUTH_FAILED', `sftp ${server}: authentication failed (tried ${methods}): check username, password or key`, { cause });
  }
}

/** Could not connect or the connection broke: retried with backoff. */
export class SftpConnectionError extends SftpError {
  constructor(server: string, detail: string, cause?: unknown) {
    super('SFTP_CONNECTION', `sftp ${server}: ${detail}`, { cause });
  }
}

/** A file operation failed on an open connection (permission, missing folder, …). */
export class SftpOperationError extends SftpError {
  constructor(server: string, operation: string, remotePath: string, cause: unknown) {
    super('SFTP_OPERATION', `sftp ${server}: ${operation} ${remotePath} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export function isHostKeyMismatchError(error: unknown): error is HostKeyMismatchError {
  return error instanceof HostKeyMismatchError;
}

export function isSftpAuthError(error: unknown): error is SftpAuthError {
  return error instanceof SftpAuthError;
}
