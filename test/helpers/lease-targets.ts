import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openState, openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import type { StateTables } from '../../src/state/tables.js';
import { freshStateDatabase } from './state-db.js';

/** A state database for the lease tests, on either dialect. */
export interface LeaseTarget {
  readonly dialect: 'sqlite' | 'postgres';
  readonly db: Kysely<StateTables>;
  /** Another connection (PostgreSQL: another pool) to the same database: a second replica. */
  connect(): Kysely<StateTables>;
  /** Empties the lease tables and checkpoints between tests. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** A fresh SQLite file with every migration. */
export async function sqliteLeaseTarget(): Promise<LeaseTarget> {
  const { db, file } = await freshStateDatabase();
  const others: Kysely<StateTables>[] = [];
  return {
    dialect: 'sqlite',
    db,
    connect: () => {
      // In one thread a synchronous SQLite connection waiting (busy_timeout) for the other
      // connection's write lock blocks the event loop that must release it: the second replica's
      // connection fails fast instead and retries on its next claim, as a real second process
      // (its own thread) would simply wait.
      const other = openStateDatabase(file, { busyTimeoutMs: 0 });
      others.push(other);
      return other;
    },
    reset: () => resetTables(db),
    close: async () => {
      for (const other of others) await other.destroy();
      await db.destroy();
      fs.rmSync(path.dirname(path.dirname(file)), { recursive: true, force: true });
    },
  };
}

/** A fresh schema on the test PostgreSQL with every migration applied. Dropped by `close`. */
export async function postgresLeaseTarget(url: string): Promise<LeaseTarget> {
  const schema = `lease_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const pools: Kysely<StateTables>[] = [];
  const connect = () => {
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 10 });
    // An idle client's connection dropping must not crash the test process.
    pool.on('error', () => undefined);
    const db = new Kysely<StateTables>({ dialect: new PostgresDialect({ pool }) });
    pools.push(db);
    return db;
  };
  // The first handle is the production opener (its introspector sees only this schema) with every migration.
  const db = await openState({ kind: 'postgres', url, schema, poolSize: 10 });
  await migrateToLatest(db);
  pools.push(db);
  return {
    dialect: 'postgres',
    db,
    connect,
    reset: () => resetTables(db),
    close: async () => {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(db).catch(() => undefined);
      for (const pool of pools) await pool.destroy();
    },
  };
}

async function resetTables(db: Kysely<StateTables>): Promise<void> {
  await db.deleteFrom('account_leases').execute();
  await db.deleteFrom('replicas').execute();
  await db.deleteFrom('checkpoints').execute();
}

/** Waits until `condition` holds (polling), failing after `timeoutMs`: lets DB-clock time pass without a fixed sleep. */
export async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
