import { sql, type Kysely } from 'kysely';
import { openState } from '../state/database.js';
import { stateDialect } from '../state/db-clock.js';
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE, migrateToLatest } from '../state/migrate.js';
import { describeStateLocation, type StateLocation } from '../state/state-location.js';
import { DaemonOwnerStore } from '../state/stores/index.js';
import { LeaseStore } from '../state/leases/index.js';
import { UsageError } from '../util/errors.js';
import { assertNoDaemon } from './daemon-ownership.js';

export interface StateCopyResult {
  /** Rows copied per table, in copy order. */
  tables: Array<{ table: string; rows: number }>;
}

/** Bound parameters per INSERT, below PostgreSQL's 65,535 and SQLite's 32,766. */
const MAX_PARAMETERS = 30_000;

/**
 * Copies the whole state from one store to another (a SQLite file to PostgreSQL when a deployment
 * scales out; any direction works). The source must be idle: no daemon recorded on it, no live
 * account lease. The target is brought to the same schema version first and must not hold
 * checkpoints unless `force` (then its rows are replaced). Everything is written in one target
 * transaction, so a failed copy leaves the target as it was; identity sequences (PostgreSQL) are
 * moved past the copied ids so new rows do not collide.
 */
export async function copyState(from: StateLocation, to: StateLocation, options: { force?: boolean } = {}): Promise<StateCopyResult> {
  if (describeStateLocation(from) === describeStateLocation(to)) throw new UsageError('state copy: the target is the state store the config already uses');
  const source = await openState(from);
  try {
    await migrateToLatest(source, { location: describeStateLocation(from) });
    await assertNoDaemon(
      new DaemonOwnerStore(source),
      describeStateLocation(from),
      'stop it first: a running daemon moves checkpoints while they are copied',
      from.kind === 'postgres' ? new LeaseStore(source) : undefined,
    );
    const target = await openState(to);
    try {
      await migrateToLatest(target, { location: describeStateLocation(to) });
      const existing = await target.selectFrom('checkpoints').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      if (Number(existing.n) > 0 && !options.force) {
        throw new UsageError(`state copy: ${describeStateLocation(to)} already holds ${existing.n} checkpoint(s); pass --force to replace its state`);
      }
      const tables = await copyTables(source, target);
      return { tables };
    } finally {
      await target.destroy();
    }
  } finally {
    await source.destroy();
  }
}

async function copyTables(source: Kysely<any>, target: Kysely<any>): Promise<StateCopyResult['tables']> {
  const bookkeeping = new Set([MIGRATION_TABLE, MIGRATION_LOCK_TABLE]);
  const sourceTables = (await source.introspection.getTables()).map((t) => t.name).filter((name) => !bookkeeping.has(name));
  const targetTables = new Set((await target.introspection.getTables()).map((t) => t.name));
  const missing = sourceTables.filter((name) => !targetTables.has(name));
  if (missing.length > 0) throw new UsageError(`state copy: the target has no table ${missing.join(', ')} (copy with the same freight-sync version)`);
  const copied: StateCopyResult['tables'] = [];
  await target.transaction().execute(async (trx) => {
    // Every table is emptied first, so a forced copy replaces the target's state as a whole.
    for (const table of sourceTables) await trx.deleteFrom(table).execute();
    for (const table of sourceTables) {
      const rows = await source.selectFrom(table).selectAll().execute();
      const columns = Object.keys(rows[0] ?? {}).length || 1;
      const chunk = Math.max(1, Math.floor(MAX_PARAMETERS / columns));
      for (let i = 0; i < rows.length; i += chunk) await trx.insertInto(table).values(rows.slice(i, i + chunk)).execute();
      if (stateDialect(trx) === 'postgres' && rows.length > 0 && 'id' in rows[0]!) await moveIdentityPast(trx, table);
      copied.push({ table, rows: rows.length });
    }
  });
  return copied;
}

/** An identity column keeps counting from where the copied ids end. */
async function moveIdentityPast(trx: Kysely<any>, table: string): Promise<void> {
  const { rows } = await sql<{ sequence: string | null }>`select pg_get_serial_sequence(${table}, 'id') as sequence`.execute(trx);
  const sequence = rows[0]?.sequence;
  if (!sequence) return;
  await sql`select setval(${sequence}, (select max(id) from ${sql.table(table)}))`.execute(trx);
}
