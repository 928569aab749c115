import { PostgresAdapter, SqliteAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * The database's clock, for deadlines several processes compare (locks, leases): each host's
 * local clock may be off by seconds, the database's is one clock for all of them. The state runs
 * on SQLite (default) or PostgreSQL; the dialect is told by the Kysely adapter.
 */
export type StateDialect = 'sqlite' | 'postgres';

export function stateDialect(db: Kysely<any>): StateDialect {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  throw new Error(`the state database must be SQLite or PostgreSQL (adapter ${adapter.constructor.name})`);
}

/**
 * The database clock in epoch milliseconds, as an SQL expression (a bigint/integer). PostgreSQL:
 * `clock_timestamp()` (the wall clock now, not the transaction's start like `now()`). SQLite
 * (3.42+ for 'subsec'; better-sqlite3 bundles a newer one): the host's clock, but the database
 * file cannot be shared across hosts anyway, so every process on it reads the same clock.
 */
export function dbNowMsSql(db: Kysely<any>): RawBuilder<number> {
  return stateDialect(db) === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp())*1000)::bigint`
    : sql<number>`CAST(unixepoch('subsec')*1000 AS INTEGER)`;
}

/** The database clock now, in epoch milliseconds (one round trip). */
export async function dbNowMs(db: Kysely<any>): Promise<number> {
  const result = await sql<{ now_ms: number | string }>`select ${dbNowMsSql(db)} as now_ms`.execute(db);
  return Number(result.rows[0]!.now_ms);
}
