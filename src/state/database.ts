import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteAdapter, SqliteDialect, sql, type DialectAdapter } from 'kysely';
import { StateError } from './errors.js';
import type { StateTables } from './tables.js';
import { registerDurableCommit } from './durability.js';
import { reportStorageProblems, stateStorageError } from './storage-guard.js';
import type { StateLocation } from './state-location.js';
import { openPostgresStateDatabase, type OpenPostgresOptions } from './postgres-database.js';

/**
 * Opens the state store wherever the config puts it: the SQLite file (default) or PostgreSQL.
 * Both speak the same tables through the same stores; call `migrateToLatest(db)` next.
 */
export async function openState(location: StateLocation, options: OpenStateDatabaseOptions & OpenPostgresOptions = {}): Promise<Kysely<StateTables>> {
  return location.kind === 'postgres' ? openPostgresStateDatabase(location, options) : openStateDatabase(location.path, options);
}

/** SQLite page cache of the state database, KiB (negative `cache_size`: a bound in bytes, not pages). */
export const STATE_CACHE_KIB = 4096;

export interface OpenStateDatabaseOptions {
  /** Milliseconds a writer waits for another connection's lock before failing. */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating if needed) the SQLite state database. WAL lets readers (`status`) run while
 * the daemon writes; synchronous=NORMAL is crash-safe for the application in WAL mode, and the
 * few writes that must survive a power loss too (a rotated refresh token) go through
 * `durableCommit`, which raises synchronous to FULL for that transaction.
 *
 * Call `migrateToLatest(db)` before using the repositories.
 */
export function openStateDatabase(filePath: string, options: OpenStateDatabaseOptions = {}): Kysely<StateTables> {
  const absolute = filePath === ':memory:' ? filePath : path.resolve(filePath);
  let sqlite: Database.Database | undefined;
  try {
    if (absolute !== ':memory:') fs.mkdirSync(path.dirname(absolute), { recursive: true });
    sqlite = reportStorageProblems(new Database(absolute), absolute);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    // better-sqlite3 builds SQLite with a 16 MB page cache per connection; a backfill of 10^6
    // loads fills it (seen_records is looked up and upserted at random keys) and it is all
    // resident. 4 MiB holds the B-tree interior pages; leaf pages come from the OS cache.
    sqlite.pragma(`cache_size = -${STATE_CACHE_KIB}`);
  } catch (error) {
    sqlite?.close();
    // A full disk or read-only folder is said as such (naming the file), not as "unable to open database file".
    throw stateStorageError(error, absolute) ?? new StateError('STATE_OPEN_FAILED', `cannot open state database ${absolute}: ${(error as Error).message}`, {
      cause: error,
    });
  }

  const db = new Kysely<StateTables>({ dialect: new LockingSqliteDialect({ database: sqlite }) });

  // The single connection is shared; count nested durable sections so the last one restores.
  let durableSections = 0;
  registerDurableCommit(db, async (work) => {
    if (durableSections++ === 0) sqlite.pragma('synchronous = FULL');
    try {
      return await work();
    } finally {
      if (--durableSections === 0) sqlite.pragma('synchronous = NORMAL');
    }
  });
  return db;
}

/**
 * Kysely's SQLite adapter takes no migration lock ("SQLite only has one connection"), but two
 * processes starting on a fresh state file (`run` and a `backfill`) each have one: both would
 * run the migrations and the second fails with "table … already exists". Holding the database's
 * write lock (`BEGIN IMMEDIATE`) from lock to unlock makes the second wait (busy_timeout), then
 * find the migrations applied. Kysely runs SQLite migrations outside a transaction, so this one
 * transaction spans them all.
 */
class LockingSqliteAdapter extends SqliteAdapter {
  private locked = false;

  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`BEGIN IMMEDIATE`.execute(db);
    this.locked = true;
  }

  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    // Not taken (busy beyond busy_timeout): the acquire error is the one to report.
    if (!this.locked) return;
    this.locked = false;
    await sql`COMMIT`.execute(db);
  }
}

class LockingSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new LockingSqliteAdapter();
  }
}
