/**
 * `account_leases`, qualified by its schema when given: with several accounts on PostgreSQL every
 * account's lease lives in the shared schema, and the fence reads it from the account's own.
 */
export function leaseTableName(schema: string | undefined): string {
  return schema === undefined ? 'account_leases' : `${schema}.account_leases`;
}
