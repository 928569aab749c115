import { sql } from 'kysely';
import type { AnyDb } from './connect.js';
import { canonicalType, describeMssqlType, describePostgresType, type InformationSchemaType } from './type-names.js';
import type { StatementContext } from './statements.js';

export interface ExistingColumn {
  readonly name: string;
  /** Declared character length (varchar(n)); undefined for unbounded or non-text types. */
  readonly length: number | undefined;
  /** The column's type as the database reports it, in the canonical spelling of `type-names.ts`. */
  readonly type: string;
}

interface ColumnRow extends InformationSchemaType {
  readonly name: string;
  readonly length: number | string | null;
  /** MySQL/MariaDB: the full `column_type` (`decimal(30,2)`, `bigint(20)`). */
  readonly column_type?: string | null;
}

/**
 * Columns of an existing table by lower-cased name (MySQL and SQL Server compare names without
 * case), or undefined when the table does not exist. Names are passed as parameters.
 */
export async function existingColumns(db: AnyDb, ctx: StatementContext, table: string): Promise<Map<string, ExistingColumn> | undefined> {
  let rows: { name: string; length: number | string | null; type: string }[];
  if (ctx.dialect === 'sqlite') {
    const result = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${table})`.execute(db);
    rows = result.rows.map((r) => ({ name: r.name, length: /\((\d+)\)/.exec(r.type)?.[1] ?? null, type: canonicalType('sqlite', r.type) }));
  } else {
    const schema =
      ctx.schema !== undefined ? sql`${ctx.schema}`
      : ctx.dialect === 'postgres' ? sql`current_schema()`
      : ctx.dialect === 'mysql' ? sql`database()`
      : sql`schema_name()`;
    const result = await sql<ColumnRow>`
      select column_name as ${sql.ref('name')}, character_maximum_length as ${sql.ref('length')},
        data_type as ${sql.ref('data_type')}, numeric_precision as ${sql.ref('numeric_precision')},
        numeric_scale as ${sql.ref('numeric_scale')}, datetime_precision as ${sql.ref('datetime_precision')}
        ${ctx.dialect === 'mysql' ? sql`, column_type as ${sql.ref('column_type')}` : sql``}
      from information_schema.columns
      where table_schema = ${schema} and table_name = ${table}`.execute(db);
    rows = result.rows.map((r) => ({
      name: r.name,
      length: r.length,
      type:
        ctx.dialect === 'postgres' ? describePostgresType(r)
        : ctx.dialect === 'mysql' ? canonicalType('mysql', String(r.column_type ?? r.data_type))
        : describeMssqlType(r),
    }));
  }
  if (rows.length === 0) return undefined;
  const columns = new Map<string, ExistingColumn>();
  for (const row of rows) {
    const length = row.length === null || row.length === undefined ? undefined : Number(row.length);
    // -1 is SQL Server's nvarchar(max); huge values are MySQL's TEXT types: both unbounded for our purpose.
    columns.set(row.name.toLowerCase(), { name: row.name, length: length !== undefined && length > 0 && length < 1_000_000 ? length : undefined, type: row.type });
  }
  return columns;
}

/** Names (lower-cased) of the indexes on a table, to create the ones a spec wants that are missing. */
export async function existingIndexes(db: AnyDb, ctx: StatementContext, table: string): Promise<Set<string>> {
  const schema = (fallback: string) => (ctx.schema !== undefined ? sql`${ctx.schema}` : sql.raw(fallback));
  let rows: { name: string }[];
  switch (ctx.dialect) {
    case 'sqlite':
      rows = (await sql<{ name: string }>`select name from pragma_index_list(${table})`.execute(db)).rows;
      break;
    case 'postgres':
      rows = (await sql<{ name: string }>`select indexname as ${sql.ref('name')} from pg_indexes where schemaname = ${schema('current_schema()')} and tablename = ${table}`.execute(db)).rows;
      break;
    case 'mysql':
      rows = (
        await sql<{ name: string }>`select distinct index_name as ${sql.ref('name')} from information_schema.statistics where table_schema = ${schema('database()')} and table_name = ${table}`.execute(db)
      ).rows;
      break;
    case 'mssql':
      rows = (
        await sql<{ name: string }>`select i.name as ${sql.ref('name')} from sys.indexes i join sys.tables t on t.object_id = i.object_id
          join sys.schemas s on s.schema_id = t.schema_id where t.name = ${table} and s.name = ${schema('schema_name()')} and i.name is not null`.execute(db)
      ).rows;
      break;
  }
  return new Set(rows.map((r) => String(r.name).toLowerCase()));
}
