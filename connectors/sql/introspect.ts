import { sql } from 'kysely';
import type { AnyDb } from './connect.js';
import type { StatementContext } from './statements.js';

export interface ExistingColumn {
  readonly name: string;
  /** Declared character length (varchar(n)); undefined for unbounded or non-text types. */
  readonly length: number | undefined;
}

/**
 * Columns of an existing table by lower-cased name (MySQL and SQL Server compare names without
 * case), or undefined when the table does not exist. Names are passed as parameters.
 */
export async function existingColumns(db: AnyDb, ctx: StatementContext, table: string): Promise<Map<string, ExistingColumn> | undefined> {
  let rows: { name: string; length: number | string | null }[];
  if (ctx.dialect === 'sqlite') {
    const result = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${table})`.execute(db);
    rows = result.rows.map((r) => ({ name: r.name, length: /\((\d+)\)/.exec(r.type)?.[1] ?? null }));
  } else {
    const schema =
      ctx.schema !== undefined ? sql`${ctx.schema}`
      : ctx.dialect === 'postgres' ? sql`current_schema()`
      : ctx.dialect === 'mysql' ? sql`database()`
      : sql`schema_name()`;
    const result = await sql<{ name: string; length: number | string | null }>`
      select column_name as ${sql.ref('name')}, character_maximum_length as ${sql.ref('length')}
      from information_schema.columns
      where table_schema = ${schema} and table_name = ${table}`.execute(db);
    rows = result.rows;
  }
  if (rows.length === 0) return undefined;
  const columns = new Map<string, ExistingColumn>();
  for (const row of rows) {
    const length = row.length === null || row.length === undefined ? undefined : Number(row.length);
    // -1 is SQL Server's nvarchar(max); huge values are MySQL's TEXT types: both unbounded for our purpose.
    columns.set(row.name.toLowerCase(), { name: row.name, length: length !== undefined && length > 0 && length < 1_000_000 ? length : undefined });
  }
  return columns;
}
