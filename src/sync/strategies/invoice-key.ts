import type { InvoiceFacts, InvoiceKind } from '../../state/stores/sync-side-store.js';
import type { RawRecord } from '../stream-definition.js';
import { requireKey } from '../streams/common.js';
import { REMOVED_MARKER } from './snapshot.js';
import { withMember } from '../../util/record-json.js';

/**
 * Which invoice a record is, across kinds (spec §4.2). A sub-customer invoice is another charge
 * set of a load that has its own (primary) invoice, and a combined invoice holds the charge sets of
 * several loads; nothing promises either has an `_id` of its own, so the key says the kind:
 *
 * - primary invoice (a load's own): `<_id>` — unchanged, existing sinks keep their rows;
 * - combined invoice (entries of more than one load): `combined:<_id>`;
 * - sub-customer invoice (listed with `isSubCustomer=true`): `sub:<_id>:<charge set numbers>`.
 *
 * Only the sub-customer listing returns sub-customer invoices, so the strategy marks what it
 * returned (`_freightSync.invoiceKind`); combined ones are recognised by their content, whichever
 * path (list, single GET, webhook refresh) brought them.
 */
export const INVOICE_MARK_FIELD = '_freightSync';

export function markSubCustomer(record: RawRecord): RawRecord {
  const mark = (record[INVOICE_MARK_FIELD] ?? {}) as Record<string, unknown>;
  // A copy whose content hash covers the invoice as before, plus the mark (record-json.ts).
  return withMember(record, INVOICE_MARK_FIELD, { ...mark, invoiceKind: 'subCustomer' });
}

function entriesOf(record: RawRecord): Array<Record<string, unknown>> {
  return Array.isArray(record.invoice) ? (record.invoice as Array<Record<string, unknown>>).filter((e) => e !== null && typeof e === 'object') : [];
}

export function invoiceLoadReferences(record: RawRecord): string[] {
  const refs = entriesOf(record)
    .map((e) => e.load_reference_number)
    .filter((r): r is string => typeof r === 'string' && r !== '');
  return [...new Set(refs)];
}

export function invoiceKind(record: RawRecord): InvoiceKind {
  const mark = record[INVOICE_MARK_FIELD] as Record<string, unknown> | undefined;
  if (mark?.invoiceKind === 'subCustomer') return 'subCustomer';
  return invoiceLoadReferences(record).length > 1 ? 'combined' : 'primary';
}

export function invoiceKey(record: RawRecord): string {
  const id = requireKey('invoices', record, '_id');
  // A tombstone built from the index already carries the key it removes.
  if (record[REMOVED_MARKER] === true) return id;
  switch (invoiceKind(record)) {
    case 'combined':
      return `combined:${id}`;
    case 'subCustomer': {
      const sets = entriesOf(record).map((e) => (typeof e.chargeSetNumber === 'string' && e.chargeSetNumber !== '' ? e.chargeSetNumber : String(e.reference_number ?? '')));
      return `sub:${id}:${sets.join('+')}`;
    }
    default:
      return id;
  }
}

/** A voided invoice (listed with `isIncludeDeleted`): delivered as a tombstone. */
export function invoiceDeleted(record: RawRecord): boolean {
  return record.isDeleted === true;
}

/** What the invoice index keeps of a delivered invoice. */
export function invoiceFacts(invoice: RawRecord): InvoiceFacts {
  const entries = entriesOf(invoice);
  const status = typeof invoice.status === 'string' ? invoice.status : typeof entries[0]?.status === 'string' ? (entries[0].status as string) : null;
  const billingDate = typeof invoice.billingDate === 'string' ? invoice.billingDate : typeof entries[0]?.billingDate === 'string' ? (entries[0].billingDate as string) : null;
  return {
    invoiceId: invoiceKey(invoice),
    kind: invoiceKind(invoice),
    status,
    billingDate,
    deleted: invoiceDeleted(invoice),
    loadReferenceNumbers: invoiceLoadReferences(invoice),
  };
}
