import { PostgresAdapter, SqliteAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import { StateError } from './errors.js';

export type StateDialect = 'sqlite' | 'postgres';

/**
 * Which database a Kysely (or a transaction of it) talks to, from its adapter class: the few
 * statements that differ by dialect (row locks, the clock) branch on this, nothing else.
 */
export function stateDialect(db: Kysely<any>): StateDialect {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  throw new StateError('STATE_DIALECT_UNSUPPORTED', `the state database must be SQLite or PostgreSQL (adapter ${adapter.constructor.name})`);
}

/**
 * The database's clock in epoch milliseconds, as an SQL expression. Leases expire by this clock
 * only: replicas' own clocks drift and a paused process's clock says nothing about the time the
 * others see, while every replica reads the one database clock.
 *
 * PostgreSQL: `clock_timestamp()`, not `now()` — `now()` is frozen at the start of the
 * transaction, so a long transaction would check its lease against a stale time.
 * SQLite: `unixepoch('subsec')` (SQLite ≥ 3.42; better-sqlite3 12 bundles 3.5x). SQLite has no
 * server: its clock is the clock of the host running the statement, which is the same host for
 * every process sharing the file.
 */
export function dbNowMs(db: Kysely<any>): RawBuilder<number> {
  return stateDialect(db) === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}

/** The database clock read once (epoch ms): for status output and tests, never for lease decisions in code. */
export async function readDbNowMs(db: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ now: number | string }>`select ${dbNowMs(db)} as now`.execute(db);
  return Number(rows[0]!.now);
}
