import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/** The two engines the state store runs on: a SQLite file (default) or PostgreSQL (`state.url`). */
export type StateDialect = 'sqlite' | 'postgres';

/**
 * Which engine a state database handle talks to, from its Kysely adapter. Stores use it only for
 * the few statements the engines spell differently (row locks, the database clock).
 */
export function stateDialect(db: Kysely<any>): StateDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * The database's clock in epoch milliseconds, as an SQL expression. Deadlines that several
 * processes compare (leases, refresh locks) are measured by this one clock, never by each host's:
 * two hosts whose clocks differ by a minute would otherwise both believe they hold a lease.
 * PostgreSQL's `clock_timestamp()` moves inside a transaction (`now()` would not).
 */
export function dbNowMs(db: Kysely<any>): RawBuilder<number> {
  return stateDialect(db) === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}
