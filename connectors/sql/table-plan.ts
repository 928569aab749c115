import { RAW_COLUMN, type StreamMapping } from '../../src/contracts/index.js';
import type { CompiledChild, CompiledColumn, CompiledTable } from '../../src/contracts/index.js';
import { FreightSyncError } from '../../src/util/errors.js';
import { BOOLEAN, columnKind, JSON_DOCUMENT, TEXT, TIMESTAMP, type ColumnKind } from './column-kinds.js';
import { assertIdentifier } from './identifiers.js';
import { sqlTypeOf, declaredLength } from './sql-types.js';
import type { SqlDialectName } from './options.js';

/** The run that last wrote the row (`RecordBatch.runId`). */
export const RUN_ID_COLUMN = '_run_id';

/** Soft-delete flag of root tables: true once a tombstone arrived for the row. */
export const DELETED_COLUMN = '_deleted';

const OP_TYPE: Record<SqlDialectName, string> = { sqlite: 'text', postgres: 'text', mysql: 'varchar(16)', mssql: 'nvarchar(16)' };

export interface ColumnPlan {
  readonly name: string;
  readonly kind: ColumnKind;
  readonly sqlType: string;
  /** Declared character length, when the type has one (for naming the column of a "too long" error). */
  readonly length: number | undefined;
  readonly key: boolean;
}

export interface TablePlan {
  /** Name in the mapping (`loads`). */
  readonly logical: string;
  /** Name in the database (`erp_loads`): prefix applied, validated. */
  readonly name: string;
  readonly columns: readonly ColumnPlan[];
  readonly key: readonly string[];
  readonly isRoot: boolean;
  /** Columns of this table holding the root row's key, in the root key's order (root: its key). */
  readonly rootKeyColumns: readonly string[];
  readonly depth: number;
}

export interface StreamPlan {
  readonly stream: string;
  readonly root: TablePlan;
  /** Child tables, parents before their children. */
  readonly children: readonly TablePlan[];
}

export class SqlMappingError extends FreightSyncError {
  readonly table: string;
  constructor(table: string, message: string) {
    super('SQL_MAPPING_UNSUPPORTED', `table ${table}: ${message}`);
    this.table = table;
  }
}

export interface PlanSettings {
  readonly dialect: SqlDialectName;
  readonly tablePrefix: string;
  readonly textLength: number;
}

/**
 * The tables a stream's mapping needs, with a type per column. Children are replaced per root
 * row, so every child table must carry the root key (through `parentKey` chains); a mapping that
 * does not is refused here, before any write.
 */
export function planStream(mapping: StreamMapping, settings: PlanSettings): StreamPlan {
  const plans = new Map<string, TablePlan>();
  const kindsByTable = new Map<string, Map<string, ColumnKind>>();
  const ordered: TablePlan[] = [];
  for (const table of mapping.tables) {
    const child = table as CompiledChild;
    const parent = child.parentTable ? plans.get(child.parentTable) : undefined;
    const parentKinds = child.parentTable ? kindsByTable.get(child.parentTable) : undefined;
    const kinds = new Map<string, ColumnKind>();

    for (const parentKey of parent ? child.parentKey : []) {
      kinds.set(parentKey.name, (parentKey.fromColumn !== undefined ? parentKinds?.get(parentKey.fromColumn) : undefined) ?? TEXT);
    }
    for (const column of table.columns) kinds.set(column.name, columnKind(column as CompiledColumn));
    if (table.includeRaw) kinds.set(RAW_COLUMN, JSON_DOCUMENT);
    kinds.set('_op', TEXT);
    kinds.set('_updated_at', TIMESTAMP);
    kinds.set('_synced_at', TIMESTAMP);
    kinds.set(RUN_ID_COLUMN, TEXT);
    if (!parent) kinds.set(DELETED_COLUMN, BOOLEAN);
    kindsByTable.set(table.table, kinds);

    const plan = buildPlan(table, kinds, parent, child, settings);
    plans.set(table.table, plan);
    ordered.push(plan);
  }
  const [root, ...children] = ordered;
  if (!root) throw new SqlMappingError(mapping.stream, 'mapping has no tables');
  return { stream: mapping.stream, root, children };
}

function buildPlan(table: CompiledTable, kinds: Map<string, ColumnKind>, parent: TablePlan | undefined, child: CompiledChild, settings: PlanSettings): TablePlan {
  const name = assertIdentifier('table', `${settings.tablePrefix}${table.table}`);
  const columns: ColumnPlan[] = [...kinds].map(([column, kind]) => {
    assertIdentifier(`column of table ${name}`, column);
    // `_op` only ever holds `upsert` or `delete`: a short type where the dialect sizes text.
    const effective: ColumnKind = column === '_op' ? { type: 'custom', sqlType: OP_TYPE[settings.dialect] } : kind;
    const sqlType = sqlTypeOf(effective, settings.dialect, settings.textLength);
    return { name: column, kind: effective, sqlType, length: declaredLength(sqlType), key: table.key.includes(column) };
  });
  for (const keyColumn of table.key) {
    const column = columns.find((c) => c.name === keyColumn);
    if (column && column.kind.type === 'longText' && (settings.dialect === 'mysql' || settings.dialect === 'mssql')) {
      throw new SqlMappingError(name, `key column ${keyColumn} is long text (json/join), which ${settings.dialect} cannot index; give it sqlType: varchar(N)`);
    }
  }

  let rootKeyColumns: string[];
  if (!parent) rootKeyColumns = [...table.key];
  else {
    rootKeyColumns = parent.rootKeyColumns.map((parentColumn, i) => {
      const carried = child.parentKey.find((k) => k.fromColumn === parentColumn);
      if (!carried) {
        throw new SqlMappingError(
          name,
          `does not carry the root key column ${parentColumn} of ${parent.name} (key part ${i + 1}); add it to parentKey so its rows can be replaced per parent`,
        );
      }
      return carried.name;
    });
  }
  return { logical: table.table, name, columns, key: [...table.key], isRoot: !parent, rootKeyColumns, depth: parent ? parent.depth + 1 : 0 };
}
