import type { ApiClient } from '../api/api-client.js';
import { listInvoices } from '../api/endpoints/invoices.js';
import type { Invoice } from '../api/schemas/resources.js';
import { MAX_PAGES, PAGE } from './reconcile.js';

export interface FoundInvoice {
  id: string;
  loadReference: string | null;
  loadId: string | null;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** Whether an invoice bills one of `numbers` (charge set numbers, or the load's reference number). */
function covers(invoice: Invoice, numbers: ReadonlySet<string>): boolean {
  const record = invoice as Record<string, unknown>;
  const details = (record['loadDetails'] ?? {}) as Record<string, unknown>;
  const own = [record['chargeSetNumber'], details['reference_number']];
  const entries = (invoice.invoice ?? []) as Array<Record<string, unknown>>;
  const fromEntries = entries.flatMap((e) => [e['reference_number'], e['chargeSetNumber'], e['load_reference_number']]);
  return [...own, ...fromEntries].some((v) => typeof v === 'string' && numbers.has(v));
}

function found(invoice: Invoice): FoundInvoice {
  const details = ((invoice as Record<string, unknown>)['loadDetails'] ?? {}) as Record<string, unknown>;
  const firstEntry = (invoice.invoice ?? [])[0];
  return { id: invoice._id, loadReference: text(details['reference_number']) ?? text(firstEntry?.load_reference_number), loadId: text(details['_id']) };
}

/**
 * Live invoices billed since `billedFrom` that cover any of `numbers`: the list filtered by
 * `invoiceNumbers`, once with combined invoices and once for sub-customer ones (which the list
 * shows only on their own, §4.2). Every record is checked, not trusted to the filter.
 */
export async function invoicesCovering(client: ApiClient, numbers: readonly string[], billedFrom: string, signal: AbortSignal): Promise<FoundInvoice[]> {
  const wanted = new Set(numbers);
  const out = new Map<string, FoundInvoice>();
  for (const kind of [{ isShowCombinedInvoices: true }, { isSubCustomer: true }]) {
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await listInvoices(client, { invoiceNumbers: [...wanted], billingFrom: billedFrom, ...kind, skip: page * PAGE, limit: PAGE }, signal);
      for (const invoice of result.items) if (covers(invoice, wanted)) out.set(invoice._id, found(invoice));
      if (result.items.length + result.rejected.length < PAGE) break;
    }
  }
  return [...out.values()];
}
