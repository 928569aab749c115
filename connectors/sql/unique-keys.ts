import { sql } from 'kysely';
import type { AnyDb } from './connect.js';
import type { StatementContext } from './statements.js';

/**
 * Column sets (lower-cased, sorted, joined by ",") of the unique indexes and primary key of an
 * existing table. An upsert needs one that equals the mapping's key: without it PostgreSQL and
 * SQLite refuse ON CONFLICT, and MySQL would silently insert duplicates. Undefined when the
 * dialect is not checked (SQL Server: not tested against a live server).
 */
export async function uniqueColumnSets(db: AnyDb, ctx: StatementContext, table: string): Promise<Set<string> | undefined> {
  const byIndex = new Map<string, string[]>();
  const add = (index: string, column: string) => byIndex.set(index, [...(byIndex.get(index) ?? []), column.toLowerCase()]);
  switch (ctx.dialect) {
    case 'sqlite': {
      const indexes = await sql<{ name: string; unique: number }>`select name, "unique" from pragma_index_list(${table})`.execute(db);
      for (const index of indexes.rows.filter((i) => Number(i.unique) === 1)) {
        const columns = await sql<{ name: string }>`select name from pragma_index_info(${index.name})`.execute(db);
        for (const c of columns.rows) add(index.name, c.name);
      }
      // A single-column INTEGER PRIMARY KEY is the rowid and has no index entry.
      const pk = await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${table}) where pk > 0`.execute(db);
      for (const c of pk.rows) add('(primary key)', c.name);
      break;
    }
    case 'postgres': {
      const schema = ctx.schema !== undefined ? sql`${ctx.schema}` : sql`current_schema()`;
      const rows = await sql<{ index: string; column: string }>`
        select i.indexrelid::text as ${sql.ref('index')}, a.attname as ${sql.ref('column')}
        from pg_index i
        join pg_class t on t.oid = i.indrelid
        join pg_namespace n on n.oid = t.relnamespace
        join pg_attribute a on a.attrelid = t.oid and a.attnum = any(i.indkey)
        where i.indisunique and n.nspname = ${schema} and t.relname = ${table}`.execute(db);
      for (const r of rows.rows) add(r.index, r.column);
      break;
    }
    case 'mysql': {
      const schema = ctx.schema !== undefined ? sql`${ctx.schema}` : sql`database()`;
      const rows = await sql<{ index: string; column: string }>`
        select index_name as ${sql.ref('index')}, column_name as ${sql.ref('column')}
        from information_schema.statistics
        where non_unique = 0 and table_schema = ${schema} and table_name = ${table}`.execute(db);
      for (const r of rows.rows) add(r.index, r.column);
      break;
    }
    case 'mssql':
      return undefined;
  }
  return new Set([...byIndex.values()].map((columns) => [...new Set(columns)].sort().join(',')));
}

export function columnSetKey(columns: readonly string[]): string {
  return [...new Set(columns.map((c) => c.toLowerCase()))].sort().join(',');
}
