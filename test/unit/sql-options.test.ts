import { describe, expect, it } from 'vitest';
import { sqlConnector, sqlOptionsSchema, planStream, SqlIdentifierError, SqlMappingError } from '../../connectors/sql/index.js';
import { columnKind } from '../../connectors/sql/column-kinds.js';
import { columnOfError, classifyDbError } from '../../connectors/sql/db-errors.js';
import { createConnectors } from '../../src/plugins/create-connectors.js';
import { getBuiltInConnector } from '../../src/plugins/registry.js';
import { parseMapping } from '../../src/mapping/index.js';
import type { CompiledColumn } from '../../src/mapping/compile-mapping.js';
import { ConfigError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { mappersOf } from '../helpers/mappers.js';

const issues = (input: unknown) => {
  const result = sqlOptionsSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('sql connector options', () => {
  it('is registered as the built-in "sql"', async () => {
    expect((await getBuiltInConnector('sql'))?.name).toBe('sql');
  });

  it('applies defaults', () => {
    expect(sqlOptionsSchema.parse({ dialect: 'postgres', host: 'db', password: 'pw' })).toMatchObject({
      tablePrefix: '',
      pool: { max: 10 },
      deleteMode: 'soft',
      createTables: true,
      textLength: 255,
      onRowError: 'skip-and-report',
      errorsTable: 'sync_errors',
      ssl: false,
    });
    expect(sqlOptionsSchema.parse({ dialect: 'sqlite', filename: 'x.db', staging: {} }).staging).toEqual({ table: 'freight_outbound_requests', claimBatch: 100, claimTimeout: 600_000 });
    // `${VAR}` interpolation yields strings: numbers and booleans given as text are accepted.
    expect(sqlOptionsSchema.parse({ dialect: 'mysql', host: 'db', port: '3307', createTables: 'false' })).toMatchObject({ port: 3307, createTables: false });
  });

  it('rejects injection through the table prefix, schema, staging and errors table names at config validation', () => {
    expect(issues({ dialect: 'sqlite', filename: 'x.db', tablePrefix: 'erp_"; DROP TABLE loads; --' })).toEqual([
      'tablePrefix: table prefix is not a valid SQL identifier (letter or _ first, then letters, digits, _)',
    ]);
    expect(issues({ dialect: 'postgres', host: 'h', schema: 'public.x' })).toEqual(['schema: schema is not a valid SQL identifier (letter or _ first, then letters, digits, _)']);
    expect(issues({ dialect: 'postgres', host: 'h', staging: { table: 'req`s' } })[0]).toMatch(/^staging\.table: staging table is not a valid SQL identifier/);
    expect(issues({ dialect: 'postgres', host: 'h', errorsTable: 'a b' })[0]).toMatch(/^errorsTable: /);
    expect(issues({ dialect: 'postgres', host: 'h', tablePrefix: 'x'.repeat(64) })[0]).toMatch(/longer than 63 characters/);
  });

  it('rejects unknown keys and connection settings that do not fit the dialect', () => {
    expect(issues({ dialect: 'sqlite', filename: 'x.db', tablePrefx: 'a' })[0]).toMatch(/tablePrefx/);
    expect(issues({ dialect: 'sqlite' })).toEqual(['filename: is required for dialect sqlite (a file path, or :memory:)']);
    expect(issues({ dialect: 'sqlite', filename: 'x', host: 'h', schema: 's' })).toEqual(['host: is not used by dialect sqlite (give filename)', 'schema: is not supported by dialect sqlite']);
    expect(issues({ dialect: 'postgres' })).toEqual(['host: is required for dialect postgres unless url is given']);
    expect(issues({ dialect: 'postgres', url: 'postgres://x', host: 'h' })).toEqual(['url: give either url or host/port/user/password/database, not both']);
    expect(issues({ dialect: 'oracle', host: 'h' })[0]).toMatch(/^dialect: /);
  });

  it('rejects a column name or sqlType that could carry SQL, with its config path, before anything connects', async () => {
    const attempt = (column: Record<string, unknown>) =>
      createConnectors(
        { erp: { type: 'sql', options: { dialect: 'sqlite', filename: ':memory:' }, mappings: { loads: { table: 'loads', key: ['id'], columns: [{ name: 'id', path: 'id' }, column] } } } },
        { baseDir: process.cwd(), logger: silentLogger(), streamsFor: () => ['loads'] },
      ).catch((e: unknown) => e);
    const byName = await attempt({ name: 'x"; drop table loads; --', path: 'x' });
    expect(byName).toBeInstanceOf(ConfigError);
    expect((byName as ConfigError).issues.join('\n')).toContain('connectors.erp.mappings.loads.columns[1].name: "x"; drop table loads; --" is not a valid column name');
    const byType = await attempt({ name: 'y', path: 'y', sqlType: 'text); drop table loads; --' });
    expect(byType).toBeInstanceOf(ConfigError);
    expect((byType as ConfigError).issues.join('\n')).toMatch(/connectors\.erp\.mappings\.loads\.columns\[1\]\.sqlType: .*"text\); drop table loads; --"/);
  });

  it('refuses names too long for the database and child tables that do not carry the root key', async () => {
    const long = parseMapping('things', { table: 'things', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: `c${'x'.repeat(70)}`, path: 'x' }] });
    expect(() => planStream(long, { dialect: 'postgres', tablePrefix: '', textLength: 255 })).toThrow(SqlIdentifierError);
    const orphan = parseMapping('things', {
      table: 'things',
      key: ['id'],
      columns: [{ name: 'id', path: 'id' }, { name: 'name', path: 'name' }],
      children: [{ table: 'parts', path: 'parts', parentKey: { thing_name: 'name' }, key: ['thing_name', 'n'], columns: [{ name: 'n', path: '$index' }] }],
    });
    expect(() => planStream(orphan, { dialect: 'sqlite', tablePrefix: '', textLength: 255 })).toThrow(SqlMappingError);
    expect(() => planStream(orphan, { dialect: 'sqlite', tablePrefix: '', textLength: 255 })).toThrow('table parts: does not carry the root key column id of things');
    const config = sqlOptionsSchema.parse({ dialect: 'sqlite', filename: ':memory:', tablePrefix: 'erp_' });
    await expect(sqlConnector.create(config, { instanceName: 'erp', logger: silentLogger(), baseDir: '.', mappings: mappersOf([['things', long]]) })).rejects.toThrow(/is longer than 63 characters/);
  });

  it('config/examples/sql-postgres.yaml validates, password from the environment', async () => {
    const { loadConfig } = await import('../../src/config/load-config.js');
    const { config } = await loadConfig({ cwd: process.cwd(), configPath: 'config/examples/sql-postgres.yaml', env: { FREIGHT_CLIENT_ID: 'a', FREIGHT_CLIENT_SECRET: 'b', ERP_DB_PASSWORD: 'from-env' } });
    const options = sqlOptionsSchema.parse(config.connectors.erp_db!.options);
    expect(options).toMatchObject({ dialect: 'postgres', password: 'from-env', schema: 'freight', tablePrefix: 'fs_', staging: { table: 'freight_outbound_requests' } });
  });

  it('plans every default mapping on every dialect', async () => {
    const { loadMapping, STREAM_NAMES } = await import('../../src/mapping/index.js');
    for (const stream of STREAM_NAMES) {
      for (const variant of ['main', 'brokerage']) {
        const mapping = await loadMapping(stream, undefined, { baseDir: '.', variant });
        for (const dialect of ['sqlite', 'postgres', 'mysql', 'mssql'] as const) {
          expect(() => planStream(mapping, { dialect, tablePrefix: 'erp_', textLength: 255 }), `${stream}/${variant}/${dialect}`).not.toThrow();
        }
      }
    }
  });
});

describe('sql column types and error parsing', () => {
  const column = (spec: Record<string, unknown>) => parseMapping('t', { table: 't', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: 'c', ...spec }] }).root.columns[1] as CompiledColumn;

  it('derives the kind from the transforms', () => {
    expect(columnKind(column({ path: 'x' }))).toEqual({ type: 'text' });
    expect(columnKind(column({ path: 'x', transform: 'number' }))).toEqual({ type: 'double' });
    expect(columnKind(column({ path: 'x', transform: { type: 'number', decimals: 2 } }))).toEqual({ type: 'decimal', scale: 2 });
    expect(columnKind(column({ path: 'x', transform: 'boolean' }))).toEqual({ type: 'boolean' });
    expect(columnKind(column({ path: 'x', transform: { type: 'boolean', true: 'Y', false: 'N' } }))).toEqual({ type: 'text' });
    expect(columnKind(column({ path: 'x', transform: 'date' }))).toEqual({ type: 'timestamp' });
    expect(columnKind(column({ path: 'x', transform: { type: 'date', format: 'isoDate' } }))).toEqual({ type: 'date' });
    expect(columnKind(column({ path: 'x', transform: { type: 'date', format: 'epochMillis' } }))).toEqual({ type: 'integer' });
    expect(columnKind(column({ path: 'x', transform: { type: 'date', format: 'dd.MM.yyyy' } }))).toEqual({ type: 'text' });
    expect(columnKind(column({ path: 'x', transform: 'json' }))).toEqual({ type: 'longText' });
    expect(columnKind(column({ path: 'x', transform: ['number', { type: 'default', value: 0 }] }))).toEqual({ type: 'double' });
    expect(columnKind(column({ path: 'x', sqlType: 'numeric(12, 2)' }))).toEqual({ type: 'custom', sqlType: 'numeric(12, 2)' });
  });

  it('classifies data errors apart from everything else, and finds the column', () => {
    expect(classifyDbError('postgres', { code: '22001' })).toMatchObject({ dataError: true, retryable: false });
    expect(classifyDbError('postgres', { code: '42P01' })).toMatchObject({ dataError: false });
    expect(classifyDbError('postgres', { code: '40P01' })).toMatchObject({ retryable: true });
    expect(classifyDbError('mysql', { errno: 1406 })).toMatchObject({ dataError: true });
    expect(classifyDbError('mysql', { errno: 2013 })).toMatchObject({ dataError: false });
    expect(classifyDbError('sqlite', { code: 'SQLITE_CONSTRAINT_CHECK' })).toMatchObject({ dataError: true });
    expect(classifyDbError('mssql', { number: 2628 })).toMatchObject({ dataError: true });
    const columns = [
      { name: 'id', kind: { type: 'text' as const }, sqlType: 'text', length: undefined, key: true },
      { name: 'code', kind: { type: 'text' as const }, sqlType: 'varchar(3)', length: 3, key: false },
      { name: 'amount', kind: { type: 'double' as const }, sqlType: 'double', length: undefined, key: false },
    ];
    expect(columnOfError(new Error("Data too long for column 'code' at row 1"), undefined, columns)).toBe('code');
    expect(columnOfError(new Error("Incorrect double value: 'x' for column `db`.`t`.`amount` at row 1"), undefined, columns)).toBe('amount');
    expect(columnOfError(new Error('NOT NULL constraint failed: t.id'), undefined, columns)).toBe('id');
    expect(columnOfError(new Error('value too long for type character varying(3)'), { id: '1', code: 'ABCD', amount: 1 }, columns)).toBe('code');
    expect(columnOfError(new Error('invalid input syntax for type double precision: "abc"'), { id: '1', code: 'A', amount: 'abc' }, columns)).toBe('amount');
    expect(columnOfError(new Error('something else'), { id: '1', code: 'A', amount: 1 }, columns)).toBeUndefined();
  });
});
