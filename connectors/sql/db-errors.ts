import type { Cell } from '../../src/contracts/index.js';
import type { SqlDialectName } from './options.js';
import type { ColumnPlan } from './table-plan.js';

/** What a database error means for the sink. */
export interface DbErrorInfo {
  /**
   * The data of a row was refused (too long, wrong type, NULL in NOT NULL, constraint): only that
   * row is set aside. Anything else (connection lost, missing table, permissions) fails the batch,
   * because reporting every row of a healthy batch as "bad" would lose data.
   */
  readonly dataError: boolean;
  /** Deadlock, serialization failure, lock timeout, SQLite busy: the whole batch may simply be retried. */
  readonly retryable: boolean;
  readonly code: string | undefined;
}

interface DriverError {
  code?: unknown;
  errno?: unknown;
  number?: unknown;
  column?: unknown;
  message?: unknown;
}

const MYSQL_DATA_ERRNOS = new Set([1048, 1062, 1264, 1265, 1292, 1366, 1367, 1406, 1451, 1452, 3819, 4025, 1411, 1690]);
const MYSQL_RETRY_ERRNOS = new Set([1205, 1213]);
const MSSQL_DATA_NUMBERS = new Set([241, 242, 245, 515, 547, 2601, 2627, 2628, 8114, 8115, 8152, 220, 232, 248]);
const MSSQL_RETRY_NUMBERS = new Set([1205]);

export function classifyDbError(dialect: SqlDialectName, error: unknown): DbErrorInfo {
  const e = (error ?? {}) as DriverError;
  const code = typeof e.code === 'string' ? e.code : typeof e.errno === 'number' ? String(e.errno) : typeof e.number === 'number' ? String(e.number) : undefined;
  switch (dialect) {
    case 'postgres': {
      // SQLSTATE class 22 = data exception, 23 = integrity constraint violation.
      const sqlState = typeof e.code === 'string' ? e.code : '';
      return { dataError: sqlState.startsWith('22') || sqlState.startsWith('23'), retryable: sqlState === '40P01' || sqlState === '40001', code };
    }
    case 'mysql': {
      const errno = typeof e.errno === 'number' ? e.errno : -1;
      return { dataError: MYSQL_DATA_ERRNOS.has(errno), retryable: MYSQL_RETRY_ERRNOS.has(errno), code };
    }
    case 'sqlite': {
      const sqliteCode = typeof e.code === 'string' ? e.code : '';
      // A value better-sqlite3 cannot bind is a TypeError raised before SQLite sees it.
      const bindError = error instanceof TypeError && /can only bind/i.test(String(e.message));
      return {
        dataError: bindError || sqliteCode.startsWith('SQLITE_CONSTRAINT') || sqliteCode === 'SQLITE_MISMATCH' || sqliteCode === 'SQLITE_TOOBIG',
        retryable: sqliteCode === 'SQLITE_BUSY' || sqliteCode === 'SQLITE_LOCKED',
        code,
      };
    }
    case 'mssql': {
      const number = typeof e.number === 'number' ? e.number : -1;
      return { dataError: MSSQL_DATA_NUMBERS.has(number), retryable: MSSQL_RETRY_NUMBERS.has(number), code };
    }
  }
}

const COLUMN_PATTERNS: readonly RegExp[] = [
  // MySQL/MariaDB: "Data too long for column 'x' at row 1", "Incorrect integer value: 'a' for column `db`.`t`.`x` at row 1"
  /for column (?:[`'"]?[A-Za-z0-9_]+[`'"]?\.)*[`'"]?([A-Za-z0-9_]+)[`'"]? at row/i,
  // MySQL: "Column 'x' cannot be null"; SQL Server: "column 'x'"; PostgreSQL: 'column "x"'
  /column [`'"]([A-Za-z0-9_]+)[`'"]/i,
  // SQLite: "NOT NULL constraint failed: t.x"
  /constraint failed: [A-Za-z0-9_]+\.([A-Za-z0-9_]+)/,
];

/**
 * The column a rejected row failed on: from the driver (PostgreSQL sets `column` for NOT NULL),
 * from the message (MySQL, SQLite, SQL Server name it), or by checking the row against the
 * declared types (PostgreSQL's "value too long for type character varying(10)" names none).
 */
export function columnOfError(error: unknown, row: Readonly<Record<string, Cell>> | undefined, columns: readonly ColumnPlan[]): string | undefined {
  const e = (error ?? {}) as DriverError;
  const known = new Set(columns.map((c) => c.name.toLowerCase()));
  const pick = (name: string | undefined) => (name && known.has(name.toLowerCase()) ? columns.find((c) => c.name.toLowerCase() === name.toLowerCase())!.name : undefined);
  if (typeof e.column === 'string' && pick(e.column)) return pick(e.column);
  const message = typeof e.message === 'string' ? e.message : String(error);
  for (const pattern of COLUMN_PATTERNS) {
    const found = pick(pattern.exec(message)?.[1]);
    if (found) return found;
  }
  if (!row) return undefined;
  for (const column of columns) {
    const value = row[column.name];
    if (typeof value === 'string' && column.length !== undefined && [...value].length > column.length) return column.name;
  }
  // "invalid input syntax for type double precision: "abc"": the quoted value identifies the column.
  const quoted = /:\s*"([^"]*)"\s*$/.exec(message)?.[1];
  if (quoted !== undefined) {
    const match = columns.find((c) => row[c.name] === quoted);
    if (match) return match.name;
  }
  return undefined;
}
