import type { CustomerUpdateCommand, OutboundCommand } from './commands/command.js';
import type { CustomerDirectoryStore } from '../state/stores/customer-directory-store.js';
import type { CodeLookup } from './customer-codes.js';

export type TargetOutcome = { ok: true; command: OutboundCommand } | { ok: false; error: string };

/**
 * The customer a `customer_update` names by code: one this outbox creates (the update then runs
 * after that create, in its group), else a synced customer whose `_id`, `companyID` or exact
 * `company_name` is the code (taken by its id).
 */
export async function resolveCustomerTarget(
  command: CustomerUpdateCommand,
  directory: CustomerDirectoryStore,
  codes: (code: string) => Promise<CodeLookup>,
): Promise<TargetOutcome> {
  if (!('customerCode' in command.target)) return { ok: true, command };
  const code = command.target.customerCode;
  const own = await codes(code);
  if (own.kind === 'deferred') return { ok: true, command };
  if (own.kind === 'error') return { ok: false, error: `erp_customer_code: ${own.error}` };
  const entries = (await directory.lookup([code])).filter((e) => e.collection === 'customers');
  for (const match of [entries.filter((e) => e.id === code), entries.filter((e) => e.companyId === code), entries.filter((e) => e.companyName === code)]) {
    const ids = [...new Set(match.map((e) => e.id))];
    if (ids.length === 1) return { ok: true, command: { ...command, target: { customerId: ids[0]! } } };
    if (ids.length > 1) return { ok: false, error: `erp_customer_code: "${code}" is ambiguous (${ids.length} synced customers match: ${ids.slice(0, 3).join(', ')}); give customer_id` };
  }
  return {
    ok: false,
    error: `erp_customer_code: unknown customer "${code}" (no customer_create with that code was received, and none of ${await directory.count()} synced customers has it as companyID or company_name; give customer_id, or enable the customers stream)`,
  };
}
