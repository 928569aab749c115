import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import { stateDialect } from '../db-clock.js';

/**
 * An integer primary key the database numbers itself. SQLite spells it AUTOINCREMENT (ids never
 * reused, which the quarantine and outbox rely on); PostgreSQL has identity columns, which never
 * reuse ids either. The SQLite DDL is unchanged from before PostgreSQL was supported.
 */
export function autoId(db: Kysely<any>, column: ColumnDefinitionBuilder): ColumnDefinitionBuilder {
  return stateDialect(db) === 'postgres' ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement();
}
