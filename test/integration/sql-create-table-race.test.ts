import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureTable, SqlSchemaError } from '../../connectors/sql/ensure-tables.js';
import type { TableSpec } from '../../connectors/sql/table-spec.js';
import { availableTargets, createTarget, type SqlTarget } from '../helpers/sql-targets.js';

/**
 * Replicas starting together create the same sink tables. PostgreSQL's CREATE TABLE IF NOT EXISTS
 * then fails the loser on the table's row type — `type "…" already exists` (42710), seen in the
 * 10-account cluster chaos run 12, where it killed a replica at start-up. That error is taken as
 * "someone else created it" and the table is read back: found, it is used; not there (a stray
 * type of that name), the sink says so in its own words.
 */
const targets = await availableTargets();
const made: SqlTarget[] = [];
afterAll(async () => {
  for (const t of made) await t.drop();
});

const spec: TableSpec = {
  name: 'consignees',
  primaryKey: ['id'],
  columns: [
    { name: 'id', type: { default: 'text' }, notNull: true },
    { name: 'payload', type: { default: 'text' }, notNull: false },
  ],
};

describe('PostgreSQL: CREATE TABLE failing on its row type (42710)', () => {
  it.skipIf(!targets.postgres)('is read back instead of failing the start: a table of that name is missing, the error names it', async () => {
    const target = await createTarget('postgres', targets.postgres, 'create-race');
    made.push(target);
    const schema = target.options['schema'] as string;
    // The same error the losing replica gets (42710), made deterministic: a non-relation type of
    // the table's name takes the name its row type needs.
    await sql.raw(`create type "${schema}"."consignees" as enum ('a')`).execute(target.reader);
    const error = await ensureTable(target.reader, { dialect: 'postgres', schema }, spec, { createTables: true }, 'stream consignees').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlSchemaError);
    expect(String((error as Error).message)).toContain('could not be created');
  });
});
