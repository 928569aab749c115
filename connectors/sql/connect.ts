import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, MssqlDialect, MysqlDialect, PostgresDialect, SqliteDialect, type Dialect } from 'kysely';
import type { SqlOptions } from './options.js';
import { MiniPool } from './mssql-pool.js';
import { preparingClient } from './prepared-statements.js';
import { SQLITE_BUSY_WAIT_MS } from './lock-retry.js';
import { loadDriver } from '../../src/util/optional-driver.js';
import { withStatementCache } from '../../src/util/sqlite-statements.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tables are only known at run time (from mappings)
export type AnyDb = Kysely<any>;

/**
 * Opens a pooled Kysely instance for the configured dialect. Drivers are imported lazily, so a
 * SQLite-only daemon never loads pg, mysql2 or tedious. Nothing connects here: pools connect on
 * first use (`init`). A driver that is not installed (the container image holds only the ones
 * chosen at build time) fails here with a DriverMissingError naming the package.
 */
export async function openDatabase(options: SqlOptions, baseDir: string): Promise<AnyDb> {
  return new Kysely({ dialect: await createDialect(options, baseDir) });
}

async function createDialect(options: SqlOptions, baseDir: string): Promise<Dialect> {
  switch (options.dialect) {
    case 'sqlite':
      return sqliteDialect(options.filename ?? ':memory:', baseDir);
    case 'postgres':
      return postgresDialect(options);
    case 'mysql':
      return mysqlDialect(options);
    case 'mssql':
      return mssqlDialect(options);
  }
}

function sqliteDialect(filename: string, baseDir: string): Dialect {
  const file = filename === ':memory:' ? filename : path.resolve(baseDir, filename);
  return new SqliteDialect({
    database: async () => {
      if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      // WAL lets the ERP read while the daemon writes. A writer waits for the ERP's lock instead of
      // failing — but between attempts (lock-retry.ts), never long inside SQLite's busy handler,
      // which would hold the whole (synchronous) daemon.
      db.pragma('journal_mode = WAL');
      db.pragma(`busy_timeout = ${SQLITE_BUSY_WAIT_MS}`);
      db.pragma('synchronous = NORMAL');
      // The sink runs the same statements batch after batch: prepared once per text, not per query.
      return withStatementCache(db);
    },
  });
}

async function postgresDialect(options: SqlOptions): Promise<Dialect> {
  const { default: pg } = await loadDriver('pg', 'the sql connector with dialect postgres', () => import('pg'));
  const pool = new pg.Pool({
    ...(options.url !== undefined
      ? { connectionString: options.url }
      : { host: options.host, port: options.port, user: options.user, password: options.password, database: options.database }),
    max: options.pool.max,
    ssl: options.ssl ? { rejectUnauthorized: true } : undefined,
    connectionTimeoutMillis: 10_000,
    // The batch statement, once its shape recurs, runs as a named statement (prepared-statements.ts).
    Client: preparingClient(pg.Client),
  });
  // An idle client losing its connection emits on the pool; unhandled, it would crash the daemon.
  pool.on('error', () => undefined);
  // A client checked out of the pool (inside a transaction, between statements) has no pool
  // listener (pg-pool removes it on checkout): a terminated backend then crashed the daemon.
  // Its statement fails anyway and the pool discards the broken client on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new PostgresDialect({ pool });
}

async function mysqlDialect(options: SqlOptions): Promise<Dialect> {
  const mysql = await loadDriver('mysql2', 'the sql connector with dialect mysql', () => import('mysql2'));
  const base = {
    connectionLimit: options.pool.max,
    // utf8mb4: emoji and other 4-byte characters; UTC: DATETIME columns hold UTC.
    charset: 'utf8mb4',
    timezone: 'Z',
    supportBigNumbers: true,
    connectTimeout: 10_000,
    // A clean batch is one multi-statement query (batch-statement.ts); values are still escaped by the driver.
    multipleStatements: true,
    ...(options.ssl ? { ssl: {} } : {}),
  };
  const pool =
    options.url !== undefined
      ? mysql.createPool({ uri: options.url, ...base })
      : mysql.createPool({ host: options.host, port: options.port, user: options.user, password: options.password, database: options.database, ...base });
  return new MysqlDialect({
    pool,
    onCreateConnection: async (connection) => {
      // Strict mode: a value too long or of the wrong type is an error naming the column, never a silent truncation.
      await connection.executeQuery(CompiledQuery.raw("SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"));
      await connection.executeQuery(CompiledQuery.raw("SET time_zone = '+00:00'"));
    },
  });
}

async function mssqlDialect(options: SqlOptions): Promise<Dialect> {
  const tedious = await loadDriver('tedious', 'the sql connector with dialect mssql', () => import('tedious'));
  return new MssqlDialect({
    tarn: { Pool: MiniPool as never, options: { min: 0, max: options.pool.max } },
    tedious: {
      ...tedious,
      connectionFactory: () =>
        new tedious.Connection({
          server: options.host ?? 'localhost',
          authentication: { type: 'default', options: { userName: options.user, password: options.password } },
          options: {
            port: options.port ?? 1433,
            database: options.database,
            encrypt: options.ssl,
            trustServerCertificate: !options.ssl,
          },
        }),
    },
  });
}
