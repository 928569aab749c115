import type { OutboxStore } from '../state/stores/outbox-store.js';
import type { OutboxRow } from '../state/tables.js';
import { PARTY_FIELDS } from './commands/command.js';

/**
 * ERP customer codes (`erp_customer_code` of a `customer_create`, default its `erp_key`): a load
 * or customer command may name a customer the ERP creates through this outbox by that code. The
 * create's commands share the group `cust:<code>`, which is also how the code is found again —
 * the outbox keeps the code with the API id the create returned (`result_reference_number`).
 */
export function customerGroup(code: string): string {
  return `cust:${code}`;
}

/** The newest `customer_create` for a code, in any state. */
export function customerCreateOf(outbox: Pick<OutboxStore, 'latestInGroup'>, code: string): Promise<OutboxRow | undefined> {
  return outbox.latestInGroup(customerGroup(code), 'customer_create');
}

/**
 * How intake treats a value naming a customer: `deferred` when it is the code of a customer
 * created through this outbox (in the same unit or an earlier one) — the value stays in the body
 * and is replaced by the API id when the command runs —, `error` when that create failed for
 * good, `unknown` when no such create exists (the synced customers are asked next).
 */
export type CodeLookup = { kind: 'deferred' } | { kind: 'error'; error: string } | { kind: 'unknown' };

export function codeLookup(outbox: Pick<OutboxStore, 'latestInGroup'>, unitCodes: ReadonlySet<string>): (code: string) => Promise<CodeLookup> {
  return async (code) => {
    if (unitCodes.has(code)) return { kind: 'deferred' };
    const create = await customerCreateOf(outbox, code);
    if (!create) return { kind: 'unknown' };
    if (create.state === 'dead' || create.state === 'cancelled') {
      return { kind: 'error', error: `customer code "${code}": its customer_create (outbox #${create.id}) is ${create.state}${create.last_error ? `: ${create.last_error}` : ''}` };
    }
    return { kind: 'deferred' };
  };
}

/** What a command waiting on customer codes gets when it runs: the API ids, or why it must wait or die. */
export type CodeResolution = { ok: true; ids: Map<string, string> } | { ok: false; outcome: 'wait' | 'dead'; error: string };

export async function resolveCustomerCodes(outbox: Pick<OutboxStore, 'latestInGroup'>, codes: readonly string[]): Promise<CodeResolution> {
  const ids = new Map<string, string>();
  for (const code of codes) {
    const create = await customerCreateOf(outbox, code);
    if (!create) return { ok: false, outcome: 'dead', error: `customer code "${code}": no customer_create with that code in the outbox` };
    if (create.state === 'done' && create.result_reference_number) {
      ids.set(code, create.result_reference_number);
      continue;
    }
    if (create.state === 'dead' || create.state === 'cancelled') {
      return { ok: false, outcome: 'dead', error: `blocked: the customer_create of customer code "${code}" (outbox #${create.id}) is ${create.state}: ${create.last_error ?? ''}`.trim() };
    }
    return { ok: false, outcome: 'wait', error: `waiting for the customer_create of customer code "${code}" (outbox #${create.id})` };
  }
  return { ok: true, ids };
}

/** The body with every party value that is one of the resolved codes replaced by its API id. */
export function substituteCodes(body: Record<string, unknown>, ids: ReadonlyMap<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const field of PARTY_FIELDS) {
    const value = body[field];
    if (typeof value === 'string') out[field] = ids.get(value) ?? value;
    else if (Array.isArray(value)) out[field] = value.map((v) => (typeof v === 'string' ? (ids.get(v) ?? v) : v));
  }
  return out;
}
