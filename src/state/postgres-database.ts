import { Kysely, PostgresDialect, sql, type DatabaseIntrospector, type DatabaseMetadata, type SchemaMetadata, type TableMetadata } from 'kysely';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { describeError } from '../util/errors.js';
import { loadDriver } from '../util/optional-driver.js';
import { StateError } from './errors.js';
import { describeStateLocation, type StateLocation } from './state-location.js';
import type { StateTables } from './tables.js';

type PostgresLocation = Extract<StateLocation, { kind: 'postgres' }>;

export interface OpenPostgresOptions {
  /**
   * An idle pooled connection failed (the server restarted, an operator terminated it). pg emits
   * this on the pool; without a listener the process would die of an unhandled 'error' event. The
   * pool drops the connection and opens a new one on the next query, so it is only reported.
   */
  onIdleError?: (error: Error) => void;
  /**
   * The server ends a session left idle inside a transaction this long (its locks freed), so a
   * frozen process cannot hold the lease row's lock forever. Unset: PostgreSQL's setting.
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * Share one pool among every store of this process on the same server (same URL and settings):
   * a deployment of many accounts keeps each account in a schema of its own, and a pool per
   * account would open poolSize connections per account — past PostgreSQL's max_connections
   * (100 by default) at a few dozen accounts. A shared connection is switched to the account's
   * schema when it is checked out for another one. `poolSize` then bounds the whole process.
   */
  sharedPool?: boolean;
  /**
   * Names a shared pool of its own (sharedPool): the lease renewals get one apart from the
   * accounts' work, so a renewal never waits behind the work it protects for a free connection.
   */
  poolName?: string;
  /** How long opening a connection may take (default 10 s); also pg-pool's limit on waiting for a free one. */
  connectTimeoutMs?: number;
}

const BIGINT_OID = 20;

/**
 * Opens the state store on PostgreSQL: a pool whose connections work in `location.schema`
 * (created when missing), so every table and the migration bookkeeping live there and several
 * deployments can share one database. bigint columns (epoch-millisecond deadlines, counts) read
 * back as numbers, as they do on SQLite; the values stored stay far below 2^53.
 *
 * Call `migrateToLatest(db)` before using the stores, as with SQLite.
 */
export async function openPostgresStateDatabase(location: PostgresLocation, options: OpenPostgresOptions = {}): Promise<Kysely<StateTables>> {
  const pg = await loadDriver('pg', 'state on PostgreSQL (state.url)', () => import('pg'));
  const Pool = pg.default.Pool;
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === BIGINT_OID && format !== 'binary' ? (value: string) => Number(value) : pg.default.types.getTypeParser(oid, format as 'text')) as NonNullable<
      PoolConfig['types']
    >['getTypeParser'],
  };
  const base: PoolConfig = { connectionString: location.url, connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000, types };
  await ensureSchema(new Pool({ ...base, max: 1 }), location);
  const idleTimeout = options.idleInTransactionTimeoutMs === undefined ? '' : ` -c idle_in_transaction_session_timeout=${Math.max(1, Math.trunc(options.idleInTransactionTimeoutMs))}`;
  const createPool = (searchPath: string | undefined): Pool => {
    const settings = `${searchPath === undefined ? '' : `-c search_path=${searchPath}`}${idleTimeout}`.trim();
    const pool: Pool = new Pool({ ...base, max: location.poolSize, ...(settings ? { options: settings } : {}) });
    pool.on('error', (error) => options.onIdleError?.(error));
    // pg-pool removes its listener from a client while it is checked out (a transaction between
    // statements): a backend terminated then (pg_terminate_backend, a server restart) emitted an
    // unhandled 'error' and killed the process. The statement in flight, or the next one, fails
    // instead, and the pool discards the broken client on release.
    pool.on('connect', (client) => client.on('error', (error) => options.onIdleError?.(error)));
    return pool;
  };
  const pool = options.sharedPool
    ? schemaView(sharedPool(`${options.poolName ?? 'state'}|${location.url}|${location.poolSize}|${base.connectionTimeoutMillis}|${idleTimeout}`, () => createPool(undefined)), location.schema)
    : createPool(location.schema);
  return new Kysely<StateTables>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
}

/** The process's shared pools (sharedPool), with how many state stores use each. */
const sharedPools = new Map<string, { pool: Pool; users: number }>();

function sharedPool(key: string, create: () => Pool): { pool: Pool; release: () => Promise<void> } {
  let entry = sharedPools.get(key);
  if (!entry) {
    entry = { pool: create(), users: 0 };
    sharedPools.set(key, entry);
  }
  entry.users++;
  const held = entry;
  let released = false;
  return {
    pool: held.pool,
    async release() {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      sharedPools.delete(key);
      await held.pool.end();
    },
  };
}

/** How long a store waits in all for a connection of a full shared pool. */
const SHARED_POOL_WAIT_MS = 120_000;

/**
 * pg-pool fails a checkout after `connectionTimeoutMillis` also when it only waited in the queue of
 * a full pool. With many accounts on one pool that is a busy moment (every account's first pass at
 * start-up), not an unreachable server — and the work service that waited failed, which stopped
 * the replica (10-account cluster chaos). A timeout while the pool is full is waited out again, up
 * to SHARED_POOL_WAIT_MS; a timeout opening a connection to the server still fails at once.
 */
async function connectWaitingForTurn(pool: Pool): Promise<PoolClient> {
  const deadline = Date.now() + SHARED_POOL_WAIT_MS;
  for (;;) {
    try {
      return await pool.connect();
    } catch (error) {
      const queued = /timeout exceeded when trying to connect/i.test((error as Error).message) && pool.totalCount >= (pool.options.max ?? 10);
      if (!queued || Date.now() >= deadline) throw error;
    }
  }
}

/** Which schema each shared connection's search_path is set to now. */
const connectionSchemas = new WeakMap<object, string>();

/**
 * One store's view of a shared pool: a connection it checks out works in its schema (SET
 * search_path on its first use, and again only when it last served another schema), and ending
 * the view ends the pool only when no other store uses it. What Kysely's PostgresDialect uses of a pool.
 */
function schemaView(shared: { pool: Pool; release: () => Promise<void> }, schema: string): Pool {
  const view = {
    async connect() {
      const client = await connectWaitingForTurn(shared.pool);
      // A new connection has no schema of ours yet: it is set on its first checkout.
      if (connectionSchemas.get(client) !== schema) {
        try {
          await client.query(`set search_path to "${schema}"`);
        } catch (error) {
          client.release(error as Error);
          throw error;
        }
        connectionSchemas.set(client, schema);
      }
      return client;
    },
    end: () => shared.release(),
  };
  return view as unknown as Pool;
}

/** Creates the schema once; two processes starting together may both try, which is fine. */
async function ensureSchema(pool: Pool, location: PostgresLocation): Promise<void> {
  pool.on('error', () => undefined);
  try {
    await pool.query(`create schema if not exists "${location.schema}"`);
  } catch (error) {
    // 23505/42P06: the concurrent creator won the race; the schema exists.
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') {
      throw new StateError('STATE_OPEN_FAILED', `cannot open the state database ${describeStateLocation(location)}: ${describeError(error)}`, { cause: error });
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/**
 * Kysely's PostgreSQL introspector lists the tables of every schema in the database. The Migrator
 * asks it whether its bookkeeping tables exist, so another deployment's schema in the same
 * database could answer for ours, and a schema dropped meanwhile by someone else fails the query
 * ("schema … does not exist"). The state store only ever looks at its own schema.
 */
class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ table_name: string; table_schema: string; table_type: string }>`
      select table_name, table_schema, table_type from information_schema.tables
      where table_schema = current_schema() order by table_name`.execute(this.db);
    // Columns are not needed by anything that introspects the state store (the Migrator, status).
    return rows.map((row) => ({ name: row.table_name, schema: row.table_schema, isView: row.table_type === 'VIEW', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}
