import fs from 'node:fs';
import path from 'node:path';
import { FreightSyncError } from './errors.js';

/**
 * Disk full, read-only or forbidden locations, recognised from Node's errno codes and SQLite's
 * result codes. Without this, a full disk under the state database surfaced as SQLite's follow-up
 * "cannot rollback - no transaction is active", and a full file-drop disk as a bare "ENOSPC: write"
 * naming no file: the operator could not tell that freeing space or fixing a mount was the cure.
 */
export type StorageProblemKind = 'full' | 'read-only' | 'denied';

const PROBLEM_TEXT: Record<StorageProblemKind, string> = {
  full: 'no space left on the disk (free space, or move it to a larger volume)',
  'read-only': 'the location is read-only (check the mount and the file permissions)',
  denied: 'permission denied (the daemon user cannot write there)',
};

export interface StorageProblem {
  readonly kind: StorageProblemKind;
  /** The errno or SQLite code it was recognised from (`ENOSPC`, `SQLITE_FULL`, …). */
  readonly code: string;
}

export function storageProblemOf(error: unknown): StorageProblem | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return { kind: 'full', code };
  if (code === 'EROFS' || code.startsWith('SQLITE_READONLY')) return { kind: 'read-only', code };
  if (code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') return { kind: 'denied', code };
  return undefined;
}

/** A storage problem at a named path; the message says what it is and where. */
export class StorageError extends FreightSyncError {
  readonly kind: StorageProblemKind;
  readonly path: string;

  constructor(what: string, location: string, problem: StorageProblem, options?: { cause?: unknown }) {
    super(`STORAGE_${problem.kind.toUpperCase().replace('-', '_')}`, `${what} ${location}: ${PROBLEM_TEXT[problem.kind]} (${problem.code})`, options);
    this.kind = problem.kind;
    this.path = location;
  }
}

/**
 * `error` as a StorageError naming `location` when it is a storage problem; otherwise `error`
 * unchanged. Codes that do not say why (`ENOENT` from a recursive mkdir on a read-only mount,
 * SQLite's `SQLITE_CANTOPEN` or I/O errors) are explained by probing the nearest existing
 * ancestor of `location` for write access.
 */
export function asStorageError(error: unknown, what: string, location: string): unknown {
  if (error instanceof StorageError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const unspecific = code === 'ENOENT' || code === 'SQLITE_CANTOPEN' || (typeof code === 'string' && code.startsWith('SQLITE_IOERR'));
  const problem = storageProblemOf(error) ?? (unspecific ? probeWritable(location) : undefined);
  return problem ? new StorageError(what, location, problem, { cause: error }) : error;
}

/** The storage problem that keeps `location` (or, when it does not exist, its nearest existing ancestor) from being written. */
function probeWritable(location: string): StorageProblem | undefined {
  let current = path.resolve(location);
  for (;;) {
    if (fs.existsSync(current)) {
      try {
        fs.accessSync(current, fs.constants.W_OK);
        return undefined;
      } catch (error) {
        return storageProblemOf(error);
      }
    }
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}
