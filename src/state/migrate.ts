import { Migrator, sql, type Kysely, type Migration, type MigrationResult } from 'kysely';
import { describeError } from '../util/errors.js';
import { StateError } from './errors.js';
import { stateDialect } from './db-clock.js';
import { MIGRATIONS, StaticMigrationProvider } from './migrations/index.js';

export const MIGRATION_TABLE = 'freight_sync_migration';
export const MIGRATION_LOCK_TABLE = 'freight_sync_migration_lock';

export interface MigrateOptions {
  /** For tests: another migration list. */
  migrations?: Readonly<Record<string, Migration>>;
  /** Named in errors (the database file). */
  location?: string;
}

/**
 * Brings the state database to the latest schema. Safe to call on every start: already applied
 * migrations are skipped. Refuses a database migrated by a newer freight-sync, because running
 * old code on a newer schema could corrupt state (for example lose a rotated refresh token).
 */
export async function migrateToLatest(db: Kysely<any>, options: MigrateOptions = {}): Promise<MigrationResult[]> {
  const migrations = options.migrations ?? MIGRATIONS;
  const where = options.location ? ` (${options.location})` : '';
  await assertNotNewerThanCode(db, Object.keys(migrations), where);

  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(migrations),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    // On PostgreSQL the Migrator would otherwise take another schema's bookkeeping tables (of
    // another deployment in the same database) for its own.
    ...(stateDialect(db) === 'postgres' ? { migrationTableSchema: await currentSchema(db) } : {}),
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === 'Error');
    const which = failed ? ` in migration ${failed.migrationName}` : '';
    throw new StateError('STATE_MIGRATION_FAILED', `state database migration failed${which}${where}: ${describeError(error)}`, {
      cause: error,
    });
  }
  return results;
}

async function assertNotNewerThanCode(db: Kysely<any>, known: readonly string[], where: string): Promise<void> {
  if (!(await migrationTableExists(db))) return;
  const applied: { name: string }[] = await db.selectFrom(MIGRATION_TABLE).select('name').execute();
  const unknown = applied.map((row) => row.name).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new StateError(
      'STATE_SCHEMA_TOO_NEW',
      `the state database${where} was migrated by a newer version of freight-sync (unknown migrations: ${unknown.join(', ')}); upgrade freight-sync or point state.path (or state.schema) elsewhere`,
    );
  }
}

/** Looks in the store's own schema only on PostgreSQL (see postgres-database.ts). */
async function migrationTableExists(db: Kysely<any>): Promise<boolean> {
  const tables = await db.introspection.getTables();
  return tables.some((t) => t.name === MIGRATION_TABLE);
}

async function currentSchema(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new StateError('STATE_OPEN_FAILED', 'the PostgreSQL state connection has no current schema (check state.schema and its privileges)');
  return schema;
}
