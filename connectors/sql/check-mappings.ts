import type { ConnectorCheckContext, ConnectorIssue } from '../../src/contracts/index.js';
import { SqlIdentifierError } from './identifiers.js';
import type { SqlOptions } from './options.js';
import { planStream, SqlMappingError } from './table-plan.js';

/**
 * Plans every stream's tables without a database (the same planStream `create` runs), so a table
 * or column name too long for the dialect, or a child table without the root key, is a config
 * error from `validate-config` instead of a start-up failure after the state database exists.
 */
export function checkSqlMappings(options: SqlOptions, context: ConnectorCheckContext): ConnectorIssue[] {
  const settings = { dialect: options.dialect, tablePrefix: options.tablePrefix, textLength: options.textLength };
  const issues: ConnectorIssue[] = [];
  for (const [stream, mapping] of context.mappings) {
    try {
      planStream(mapping, settings);
    } catch (error) {
      if (!(error instanceof SqlMappingError || error instanceof SqlIdentifierError)) throw error;
      issues.push({ path: ['mappings', stream], message: `${error.message} (dialect ${options.dialect})` });
    }
  }
  return issues;
}
