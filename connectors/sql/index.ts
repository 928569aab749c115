import { sql } from 'kysely';
import type { ConnectorContext, ConnectorFactory, ConnectorInstance, StreamMapper, TableMigration } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { openDatabase, type AnyDb } from './connect.js';
import { describeSqlTarget, SqlConnectError } from './connect-error.js';
import { ensureSchema, ensureStreamTables, ensureTable, pendingMigration, specOfPlan } from './ensure-tables.js';
import { applyMigration } from './schema-migration.js';
import { withLockRetry } from './lock-retry.js';
import { errorsTableSpec } from './errors-table.js';
import { checkSqlMappings } from './check-mappings.js';
import { assertIdentifier } from './identifiers.js';
import { sqlOptionsSchema, type SqlOptions } from './options.js';
import { SqlSink } from './sql-sink.js';
import { SqlSinkReader } from './sink-reader.js';
import { stagingTableSpec } from './staging-table.js';
import { StagingSource } from './staging-source.js';
import type { StatementContext } from './statements.js';
import { planStream, type StreamPlan } from './table-plan.js';

export { sqlOptionsSchema, type SqlOptions, type SqlOptionsInput } from './options.js';
export { SqlSink } from './sql-sink.js';
export { StagingSource } from './staging-source.js';
export { SqlRowError, isSqlRowError } from './row-error.js';
export { SqlSchemaError, isSqlSchemaError } from './ensure-tables.js';
export { SqlIdentifierError } from './identifiers.js';
export { SqlConnectError } from './connect-error.js';
export { SqlMappingError, planStream } from './table-plan.js';

/**
 * The SQL connector: a sink that upserts mapped records into tables (SQLite, PostgreSQL,
 * MySQL/MariaDB; SQL Server compiled but not tested against a live server), and — with
 * `staging:` — a source of outbound commands read from a staging table the ERP inserts into.
 */
export const sqlConnector: ConnectorFactory<SqlOptions> = {
  name: 'sql',
  configSchema: sqlOptionsSchema,
  check: checkSqlMappings,
  capabilities: (options) => ({ sink: true, source: options.staging !== undefined }),
  async create(options: SqlOptions, context: ConnectorContext): Promise<ConnectorInstance> {
    const logger = context.logger.child({ connector: context.instanceName, type: 'sql', dialect: options.dialect });
    const ctx: StatementContext = { dialect: options.dialect, schema: options.schema };
    const planSettings = { dialect: options.dialect, tablePrefix: options.tablePrefix, textLength: options.textLength };
    const errorsTable = assertIdentifier('errors table', `${options.tablePrefix}${options.errorsTable}`);

    // Planned before connecting: a name or mapping the database cannot take fails at start-up.
    const planned = new Map<string, StreamPlan>([...context.mappings].map(([stream, mapper]) => [stream, planStream(mapper.mapping, planSettings)]));

    const db: AnyDb = await openDatabase(options, context.baseDir);
    const ensureOptions = { createTables: options.createTables, logger };
    const ready = new Map<string, Promise<{ mapper: StreamMapper; plan: StreamPlan }>>();

    const prepare = async (stream: string): Promise<{ mapper: StreamMapper; plan: StreamPlan }> => {
      const mapper = context.mappings.get(stream);
      const plan = planned.get(stream);
      // The composition root gives a mapper for every stream routed to this connector.
      if (!mapper || !plan) throw new Error(`stream ${stream}: connector ${context.instanceName} has no mapping for it (it receives: ${[...planned.keys()].join(', ') || 'nothing'})`);
      return { mapper, plan: await ensureStreamTables(db, ctx, plan, ensureOptions) };
    };
    const streamFor = (stream: string) => {
      let pending = ready.get(stream);
      if (!pending) {
        pending = prepare(stream);
        // A failed preparation (database down at start) is tried again on the next write.
        pending.catch(() => ready.delete(stream));
        ready.set(stream, pending);
      }
      return pending;
    };

    const ping = async (): Promise<void> => {
      try {
        await sql`select 1`.execute(db);
      } catch (error) {
        throw new SqlConnectError(describeSqlTarget(options), error);
      }
    };

    const sink = new SqlSink({ db, ctx, options, errorsTable, logger, streamFor });
    const reader = new SqlSinkReader({ db, ctx, streamFor });
    const source = options.staging
      ? new StagingSource(db, ctx, { table: options.staging.table, claimBatch: options.staging.claimBatch, claimTimeoutMs: options.staging.claimTimeout }, logger)
      : undefined;

    return {
      sink,
      reader,
      ...(source ? { source } : {}),
      async init(signal: AbortSignal) {
        throwIfAborted(signal);
        await ping();
        // Every step checks before it changes anything: a step another writer's lock held up is run again.
        await withLockRetry(
          options.dialect,
          async () => {
            await ensureSchema(db, ctx, ensureOptions);
            await ensureTable(db, ctx, errorsTableSpec(errorsTable, options.textLength), ensureOptions, 'errors table');
            if (options.staging) await ensureTable(db, ctx, stagingTableSpec(options.staging.table, options.textLength), ensureOptions, 'staging table');
            for (const stream of planned.keys()) {
              throwIfAborted(signal);
              await streamFor(stream);
            }
          },
          signal,
        );
        logger.info({ streams: [...planned.keys()], schema: options.schema ?? null, tablePrefix: options.tablePrefix }, 'sql connector ready');
      },
      async migrate({ apply }, signal: AbortSignal) {
        const specs = [
          errorsTableSpec(errorsTable, options.textLength),
          ...(options.staging ? [stagingTableSpec(options.staging.table, options.textLength)] : []),
          ...[...planned.values()].flatMap((plan) => [plan.root, ...plan.children].map(specOfPlan)),
        ];
        const migrations: TableMigration[] = [];
        for (const spec of specs) {
          throwIfAborted(signal);
          const migration = await pendingMigration(db, ctx, spec);
          if (!migration) continue;
          migrations.push(migration);
          if (apply) {
            // SQLite rebuilds a table in one transaction: held up by another writer of the file, it
            // is run again. (MySQL's DDL commits statement by statement: never re-run half-done.)
            if (options.dialect === 'sqlite') await withLockRetry('sqlite', () => applyMigration(db, ctx, migration), signal);
            else await applyMigration(db, ctx, migration);
            logger.info({ table: migration.table, columns: migration.changes.map((c) => c.column) }, `migrated ${migration.table}`);
          }
        }
        return migrations;
      },
      async check(signal: AbortSignal) {
        throwIfAborted(signal);
        await ping();
      },
      async close() {
        await db.destroy();
      },
    };
  },
};

export default sqlConnector;
