import { autoIncrementId, type SpecColumn, type TableSpec } from './table-spec.js';

const timestamp = (name: string, extra: Partial<SpecColumn> = {}): SpecColumn => ({
  name,
  type: { default: 'datetime(3)', postgres: 'timestamptz', sqlite: 'text', mssql: 'datetimeoffset(3)' },
  ...extra,
});

/**
 * `freight_outbound_requests` (name configurable). The ERP inserts `erp_key`, `kind` and
 * `payload` (a JSON object with the command's fields); every other column has a default or
 * belongs to the daemon. Documented in docs/connectors.md with the DDL per dialect.
 */
export function stagingTableSpec(name: string, textLength: number): TableSpec {
  const text = { default: `varchar(${textLength})`, postgres: 'text', sqlite: 'text', mssql: `nvarchar(${textLength})` };
  const long = { default: 'longtext', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(max)' };
  return {
    name,
    id: autoIncrementId,
    columns: [
      { name: 'erp_key', type: text, notNull: true },
      { name: 'kind', type: { default: 'varchar(40)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(40)' }, notNull: true },
      { name: 'payload', type: long },
      {
        // Lifecycle: the ERP inserts `new`; the daemon moves it to claimed, queued, then done or failed.
        name: 'status',
        type: { default: 'varchar(16)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(16)' },
        notNull: true,
        defaultSql: { default: "'new'" },
      },
      { name: 'claim_token', type: { default: 'varchar(64)', postgres: 'text', sqlite: 'text', mssql: 'nvarchar(64)' } },
      { name: 'reference_number', type: text },
      { name: 'load_id', type: text },
      { name: 'error', type: long },
      { name: 'outbox_id', type: { default: 'bigint', sqlite: 'integer' } },
      timestamp('created_at', {
        defaultSql: {
          postgres: 'now()',
          mysql: 'CURRENT_TIMESTAMP(3)',
          sqlite: "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
          mssql: 'sysdatetimeoffset()',
          default: 'CURRENT_TIMESTAMP',
        },
      }),
      timestamp('claimed_at'),
      timestamp('finished_at'),
    ],
    indexes: [{ suffix: 'status', columns: ['status', 'id'] }],
  };
}
