import type Database from 'better-sqlite3';
import { asStorageError, StorageError } from '../util/storage-errors.js';
import { statementCache } from '../util/sqlite-statements.js';

const WHAT = 'state database';

/** The storage problem behind a failure on the state file, as an error naming the file. */
export function stateStorageError(error: unknown, file: string): StorageError | undefined {
  if (file === ':memory:') return undefined;
  const converted = asStorageError(error, WHAT, file);
  return converted instanceof StorageError ? converted : undefined;
}

/** What Kysely's SQLite driver needs of a statement that does nothing. */
const NO_OP_STATEMENT = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) };
const ROLLBACK = /^\s*rollback\s*;?\s*$/i;
/** Statements kept (see statementCache). */
const STATEMENT_CACHE_SIZE = 200;

/**
 * The state database connection with storage failures reported as such. Wraps every call on the
 * connection and its statements: a full disk or read-only location becomes a StorageError naming
 * the file. And after SQLITE_FULL (or an I/O error) SQLite has already rolled the transaction back
 * by itself: the ROLLBACK Kysely then sends would fail with "cannot rollback - no transaction is
 * active" and replace the real cause, so a ROLLBACK outside a transaction does nothing. Statements
 * are reused per SQL text (see STATEMENT_CACHE_SIZE).
 */
export function reportStorageProblems(sqlite: Database.Database, file: string): Database.Database {
  const guarded = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      throw stateStorageError(error, file) ?? error;
    }
  };
  const wrap = <T extends object>(target: T, override?: (name: string | symbol) => unknown): T =>
    new Proxy(target, {
      get(inner, name) {
        const special = override?.(name);
        if (special !== undefined) return special;
        // Native methods need the real object as `this`, never the proxy.
        const value: unknown = Reflect.get(inner, name, inner);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => guarded(() => (value as (...a: unknown[]) => unknown).apply(inner, args));
      },
    });
  const prepare = statementCache((source) => wrap(guarded(() => sqlite.prepare(source))), STATEMENT_CACHE_SIZE);
  return wrap(sqlite, (name) =>
    name === 'prepare'
      ? (source: string) => {
          if (ROLLBACK.test(source) && !sqlite.inTransaction) return NO_OP_STATEMENT;
          return prepare(source);
        }
      : undefined,
  );
}
