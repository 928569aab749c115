import { sleep } from '../../src/util/abort.js';
import { classifyDbError } from './db-errors.js';
import type { SqlDialectName } from './options.js';

/**
 * How long a SQLite writer of the sql connector may wait for another writer of the file (the
 * ERP, another replica) before its write fails. The wait is here, between attempts, and not in
 * SQLite's busy handler: better-sqlite3 is synchronous, so a busy handler that waits blocks the
 * whole daemon — every account, the webhook receiver, lease renewals — for as long as it waits
 * (it was 10 s per attempt). SQLite's own busy handler waits only `SQLITE_BUSY_WAIT_MS`.
 */
export const SQLITE_LOCK_WAIT_MS = 30_000;
/** SQLite's busy_timeout on the connector's connection: short locks pass without an error, and the loop is never held longer. */
export const SQLITE_BUSY_WAIT_MS = 20;
const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 250;

export interface LockRetryOptions {
  /** Attempts for the other retryable errors (deadlocks, serialization failures); default 4. */
  readonly attempts?: number;
  /** The pause before attempt n (n ≥ 2) after such an error. */
  readonly pauseMs?: (attempt: number) => number;
  /** Told before each retry. */
  readonly onRetry?: (error: unknown, attempt: number) => void;
  /** The database error inside what `work` threw (a wrapper's cause), to classify. */
  readonly causeOf?: (error: unknown) => unknown;
  /** For tests: how long SQLite busy errors are retried. */
  readonly sqliteWaitMs?: number;
}

/**
 * Runs `work` (a whole transaction, or one statement: safe to run again) until it does not fail
 * with a retryable database error. SQLite's busy or locked file is retried for up to
 * `SQLITE_LOCK_WAIT_MS` with short pauses that yield to everything else; the other retryable
 * errors `attempts` times. The last error is thrown as it is.
 */
export async function withLockRetry<T>(dialect: SqlDialectName, work: () => Promise<T>, signal: AbortSignal, options: LockRetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 4;
  const pauseMs = options.pauseMs ?? ((attempt: number) => 100 * (attempt - 1) ** 2);
  const waitUntil = Date.now() + (options.sqliteWaitMs ?? SQLITE_LOCK_WAIT_MS);
  let busyPause = FIRST_PAUSE_MS;
  let other = 0;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (signal.aborted || !classifyDbError(dialect, options.causeOf ? options.causeOf(error) : error).retryable) throw error;
      let pause: number;
      if (dialect === 'sqlite') {
        if (Date.now() >= waitUntil) throw error;
        pause = busyPause;
        busyPause = Math.min(LONGEST_PAUSE_MS, busyPause * 2);
      } else {
        other += 1;
        if (other >= attempts) throw error;
        pause = pauseMs(other + 1);
      }
      options.onRetry?.(error, attempt);
      await sleep(pause, signal);
    }
  }
}
