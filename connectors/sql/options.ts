import { z } from 'zod';
import { booleanValue, integerValue, isoDuration } from '../../src/util/zod-values.js';
import { identifierProblem, MAX_IDENTIFIER_LENGTH } from './identifiers.js';

export const SQL_DIALECTS = ['sqlite', 'postgres', 'mysql', 'mssql'] as const;
export type SqlDialectName = (typeof SQL_DIALECTS)[number];

/** A name that reaches SQL: checked here, at config validation, so a bad one never gets near a database. */
const identifier = (role: string) =>
  z.string().superRefine((value, ctx) => {
    const problem = identifierProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `${role} ${problem}` });
  });

const stagingSchema = z
  .object({
    /** Full table name the ERP inserts into (the table prefix is not applied; the schema is). */
    table: identifier('staging table').default('freight_outbound_requests'),
    /** Rows claimed per `take`. */
    claimBatch: integerValue(1, 10_000).default(100),
    /** A row left `claimed` this long (a daemon crashed between claim and accept) is claimed again. */
    claimTimeout: isoDuration().prefault('PT10M'),
  })
  .strict();

/** Options of a `type: sql` connector (`connectors.<name>.options`). */
export const sqlOptionsSchema = z
  .object({
    dialect: z.enum(SQL_DIALECTS),
    /** `postgres://user:pass@host:5432/db`, `mysql://…`; alternative to host/port/user/password/database. */
    url: z.string().min(1).optional(),
    host: z.string().min(1).optional(),
    port: integerValue(1, 65_535).optional(),
    user: z.string().min(1).optional(),
    /** Give it as `${DB_PASSWORD}` so the secret lives in the environment, not the file. */
    password: z.string().optional(),
    database: z.string().min(1).optional(),
    /** SQLite database file; relative to the config file's folder. */
    filename: z.string().min(1).optional(),
    /** TLS to the server (postgres, mysql, mssql). */
    ssl: booleanValue().default(false),
    /** PostgreSQL / SQL Server schema; for MySQL/MariaDB a database name. Created when missing (createTables). */
    schema: identifier('schema').optional(),
    /** Prepended to every table name the mappings produce (`erp_` → `erp_loads`). */
    tablePrefix: z
      .string()
      .default('')
      .superRefine((value, ctx) => {
        if (value === '') return;
        const problem = identifierProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: `table prefix ${problem}` });
      }),
    pool: z.object({ max: integerValue(1, 100).default(10) }).strict().prefault({}),
    /** `soft`: a tombstone keeps the row with `_deleted = true`; `hard`: the row is deleted. */
    deleteMode: z.enum(['soft', 'hard']).default('soft'),
    /** Create missing schema and tables from the mappings; when false, missing tables fail `init`. */
    createTables: booleanValue().default(true),
    /** Length of varchar columns where the dialect needs one (MySQL, SQL Server); long text uses TEXT types. */
    textLength: integerValue(1, 4000).default(255),
    /**
     * A row the database rejects: `skip-and-report` stores it in the errors table and commits the
     * rest of the batch; `fail` rolls the batch back and fails the write (the stream retries).
     */
    onRowError: z.enum(['skip-and-report', 'fail']).default('skip-and-report'),
    /** Name (before the table prefix) of the table rejected rows are reported in. */
    errorsTable: identifier('errors table').default('sync_errors'),
    /** Makes this connector a source of outbound commands: a staging table the ERP inserts into. */
    staging: stagingSchema.optional(),
  })
  .strict()
  .superRefine((options, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (options.dialect === 'sqlite') {
      if (options.filename === undefined) issue('filename', 'is required for dialect sqlite (a file path, or :memory:)');
      for (const key of ['url', 'host', 'port', 'user', 'password', 'database'] as const) {
        if (options[key] !== undefined) issue(key, 'is not used by dialect sqlite (give filename)');
      }
      if (options.schema !== undefined) issue('schema', 'is not supported by dialect sqlite');
    } else {
      if (options.filename !== undefined) issue('filename', `is only for dialect sqlite (dialect is ${options.dialect})`);
      if (options.url === undefined && options.host === undefined) issue('host', `is required for dialect ${options.dialect} unless url is given`);
      if (options.url !== undefined && options.host !== undefined) issue('url', 'give either url or host/port/user/password/database, not both');
      if (options.url !== undefined && options.dialect === 'mssql') issue('url', 'is not supported for mssql; give host/port/user/password/database');
    }
    // The longest name built from the prefix is checked per table when the mappings are known.
    if (options.tablePrefix.length + options.errorsTable.length > MAX_IDENTIFIER_LENGTH) {
      issue('errorsTable', `with the table prefix is longer than ${MAX_IDENTIFIER_LENGTH} characters`);
    }
  });

export type SqlOptions = z.output<typeof sqlOptionsSchema>;
export type SqlOptionsInput = z.input<typeof sqlOptionsSchema>;
