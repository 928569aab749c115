import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { AnyDb } from './connect.js';
import { encodeColumnsInto } from './encode-row.js';
import { markPreparable } from './prepared-statements.js';
import { JSONB_ELEMENT, TEXT_ELEMENT, textArrayParameter } from './pg-text-array.js';
import type { RecordGroup } from './record-groups.js';
import { everyRecordWon, newerWinsOnConflict, qualified, type ErrorsMirror, type StatementContext } from './statements.js';
import { bindTemplate, Slot, templateOf, type StatementTemplate } from './statement-template.js';
import type { ColumnPlan, StreamPlan, TablePlan } from './table-plan.js';

/**
 * The PostgreSQL batch statement with one ARRAY parameter per column instead of one parameter per
 * value: `insert … select * from unnest($1::text[], $2::bigint[], …)`, text and jsonb arrays sent
 * in the binary format (pg-text-array.ts). Same data-modifying CTEs, same order, same
 * newer-version guard as the VALUES form (batch-statement.ts); only the binding differs. The
 * VALUES form of a batch of 50 loads is ~45 KB of text with ~5,900 parameters: planned in
 * 1.4–1.8 ms per batch even when prepared, parsed once per shape, one prepared statement per
 * shape. This text is ~5.6 KB with 81 parameters and the same for every batch of the stream
 * (whatever its row counts): prepared once per connection (prepared-statements.ts), planned in
 * ~0.5 ms, and the process serialises 81 values instead of ~5,900.
 *
 * Each array is cast to the column's type WITHOUT its size (`varchar(40)` → `varchar[]`): an
 * explicit cast to `varchar(40)` would cut a long value silently, while the assignment into the
 * column refuses it, as the VALUES form does. A column whose type is not a known scalar type (an
 * array, a domain, an enum of the user's) keeps the VALUES form for the whole stream.
 */

/** Element types an array parameter may carry (type names without their size). */
const SCALAR_TYPES = new Set([
  'text', 'varchar', 'character varying', 'bpchar', 'bigint', 'int8', 'integer', 'int', 'int4', 'smallint', 'int2',
  'numeric', 'decimal', 'real', 'float4', 'double precision', 'float8', 'boolean', 'bool', 'jsonb', 'json',
  'timestamptz', 'timestamp with time zone', 'timestamp', 'timestamp without time zone', 'date', 'uuid',
  'time', 'time with time zone', 'time without time zone', 'timetz', 'interval',
]);

/** Element types a text[] element is assigned to as it is. */
const TEXT_TYPES = new Set(['text', 'varchar', 'character varying', 'bpchar']);

/** `varchar(40)` → `varchar`, `timestamp(3) with time zone` → `timestamp with time zone`; undefined when not a plain scalar. */
export function arrayElementType(column: ColumnPlan): string | undefined {
  const base = column.sqlType.replace(/\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\)/, '').replace(/\s+/g, ' ').trim().toLowerCase();
  // `char` / `character` without a size mean ONE character: the unsized blank-padded type is `bpchar`.
  if (base === 'char' || base === 'character') return 'bpchar';
  return SCALAR_TYPES.has(base) ? base : undefined;
}

interface Template extends StatementTemplate {
  /** By array index: the binary element form of a text or jsonb array; undefined: pg's array text. */
  readonly binary: readonly (typeof TEXT_ELEMENT | typeof JSONB_ELEMENT | undefined)[];
}

/** Per plan, by schema, errors table and stream: the statement's text does not depend on the batch. */
const templates = new WeakMap<StreamPlan, Map<string, Template | null>>();

/**
 * The batch's unnest statement, or undefined when the plan has a column no array can carry (the
 * caller then builds the VALUES form). `sorted`: the groups in key order.
 */
export function unnestBatchStatement(db: AnyDb, ctx: StatementContext, plan: StreamPlan, sorted: readonly RecordGroup[], errors: ErrorsMirror): CompiledQuery | undefined {
  const key = [ctx.schema ?? '', errors.table, errors.stream].join('\u0000');
  let cache = templates.get(plan);
  if (!cache) templates.set(plan, (cache = new Map()));
  let template = cache.get(key);
  if (template === undefined) {
    template = buildTemplate(db, ctx, plan, errors);
    cache.set(key, template);
  }
  if (template === null) return undefined;
  markPreparable(template.sql);
  const arrays = columnArrays(ctx, plan, sorted);
  const binary = template.binary;
  return bindTemplate(template, arrays.map((values, i) => (binary[i] === undefined ? values : textArrayParameter(values, binary[i]))));
}

/**
 * The batch as arrays, one per column, in a fixed order: the root table's columns (plan order),
 * each child table's columns (rows of the upserted records only), then the record keys.
 */
function columnArrays(ctx: StatementContext, plan: StreamPlan, sorted: readonly RecordGroup[]): unknown[][] {
  const root = plan.root.columns.map(() => [] as unknown[]);
  for (const g of sorted) encodeColumnsInto(root, g.root, plan.root, ctx.dialect, g.op);
  const arrays = root;
  for (const child of plan.children) {
    const columns = child.columns.map(() => [] as unknown[]);
    for (const g of sorted) {
      if (g.op !== 'upsert') continue;
      for (const row of g.children.get(child.name) ?? []) encodeColumnsInto(columns, row, child, ctx.dialect, 'upsert');
    }
    arrays.push(...columns);
  }
  arrays.push(sorted.map((g) => g.record.key));
  return arrays;
}

function buildTemplate(db: AnyDb, ctx: StatementContext, plan: StreamPlan, errors: ErrorsMirror): Template | null {
  const tables = [plan.root, ...plan.children];
  const types = tables.map((table) => table.columns.map(arrayElementType));
  if (types.some((list) => list.some((t) => t === undefined))) return null;

  let next = 0;
  const slotsOf = tables.map((table) => table.columns.map(() => new Slot(next++)));
  const recordKeys = new Slot(next++);
  // Text and jsonb arrays go in the binary format (pg-text-array.ts): long, quoted values copied
  // once. The others (numbers, dates, booleans: short, no quotes) as pg's array text, typed by the
  // cast; each element goes through its type's input function, as a single value does.
  const array = (table: number, column: number): RawBuilder<unknown> => {
    const type = types[table]![column]!;
    const slot = slotsOf[table]![column]!;
    return sql`${slot}::${sql.raw(TEXT_TYPES.has(type) ? 'text' : type)}[]`;
  };
  const unnest = (table: number) => sql`select * from unnest(${sql.join(tables[table]!.columns.map((_, j) => array(table, j)))})`;
  const names = (table: TablePlan) => table.columns.map((c) => c.name);
  const root = plan.root;

  const ctes: RawBuilder<unknown>[] = [];
  const upsert = (db.insertInto(qualified(ctx, root.name)).columns(names(root)).expression(unnest(0)) as any)
    .onConflict(newerWinsOnConflict(root))
    .returning(sql<number>`1`.as('one'));
  ctes.push(sql`${sql.id('fs_up')} as (${upsert})`);
  // Children of every record of the batch are deleted (tombstones too), by the root key arrays.
  const rootKeyArrays = root.key.map((k) => array(0, root.columns.findIndex((c) => c.name === k)));
  const deleted: RawBuilder<unknown>[] = [];
  plan.children.forEach((child, i) => {
    const refs = child.rootKeyColumns.map((c) => sql.ref(c));
    const match =
      refs.length === 1 ? sql`${refs[0]!} = any(${rootKeyArrays[0]!})` : sql`(${sql.join(refs)}) in (select * from unnest(${sql.join(rootKeyArrays)}))`;
    const del = db.deleteFrom(qualified(ctx, child.name)).where(match as any).returning(sql<number>`1`.as('one'));
    ctes.push(sql`${sql.id(`fs_del_${i}`)} as (${del})`);
    deleted.push(sql`(select count(*) from ${sql.id(`fs_del_${i}`)})`);
  });
  plan.children.forEach((child, i) => {
    const insert = db.insertInto(qualified(ctx, child.name)).columns(names(child)).expression(unnest(i + 1) as any);
    ctes.push(sql`${sql.id(`fs_ins_${i}`)} as (${insert})`);
  });
  const clear = db
    .deleteFrom(qualified(ctx, errors.table))
    .where('stream', '=', errors.stream)
    .where(sql`${sql.ref('record_key')} = any(${recordKeys}::text[])` as any);
  ctes.push(sql`${sql.id('fs_cleared')} as (${clear})`);
  const deletedCount = deleted.length > 0 ? sql.join(deleted, sql` + `) : sql`0`;
  const compiled = sql`with ${sql.join(ctes)} ${everyRecordWon(sql`cardinality(${recordKeys}::text[])`, deletedCount)}`.compile(db);
  const template = templateOf(compiled, next);
  if (!template) return null;
  const binary = [...types.flat().map((t) => (TEXT_TYPES.has(t!) ? TEXT_ELEMENT : t === 'jsonb' ? JSONB_ELEMENT : undefined)), TEXT_ELEMENT];
  return { ...template, binary };
}
