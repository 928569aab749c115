import { FreightSyncError } from '../../src/util/errors.js';

/**
 * Every table, column and schema name that reaches SQL comes from config or a mapping, i.e. from
 * a user. Names are checked against this pattern and then quoted by Kysely (`sql.ref`,
 * `sql.table`), never pasted into SQL text: the check keeps names portable (all four dialects,
 * unquoted-identical), the quoting makes injection impossible even if the check were bypassed.
 */
export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** PostgreSQL truncates at 63 bytes, MySQL rejects above 64: the smaller wins. */
export const MAX_IDENTIFIER_LENGTH = 63;

export class SqlIdentifierError extends FreightSyncError {
  readonly identifier: string;
  readonly role: string;
  constructor(role: string, identifier: string, reason: string) {
    super('SQL_IDENTIFIER_INVALID', `${role} ${JSON.stringify(identifier)} ${reason}`);
    this.identifier = identifier;
    this.role = role;
  }
}

/** Why `name` is not a usable identifier, or undefined when it is. */
export function identifierProblem(name: string): string | undefined {
  if (!IDENTIFIER_PATTERN.test(name)) return 'is not a valid SQL identifier (letter or _ first, then letters, digits, _)';
  if (name.length > MAX_IDENTIFIER_LENGTH) return `is longer than ${MAX_IDENTIFIER_LENGTH} characters`;
  return undefined;
}

export function assertIdentifier(role: string, name: string): string {
  const problem = identifierProblem(name);
  if (problem) throw new SqlIdentifierError(role, name, problem);
  return name;
}
