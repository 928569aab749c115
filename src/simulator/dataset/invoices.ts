import { COLLECTION_CODES, makeId } from '../ids.js';
import { hashInt } from '../prng.js';
import { type DatasetContext } from './context.js';
import { baseInvoiceEntryCount, baseInvoiceStatus, loadOfInvoicePosition, type Load } from './loads.js';

export type Invoice = Record<string, unknown>;

export function invoiceId(ctx: DatasetContext, position: number): string {
  return makeId(COLLECTION_CODES.invoices, ctx.seed, position);
}

/** Builds an invoice (§2.4) for a load; `entries` > 1 means several charge sets. */
export function buildInvoice(
  ctx: DatasetContext,
  position: number,
  load: Load,
  billingDate: string,
  entries: number,
  status: string,
): Invoice {
  const ref = String(load['reference_number']);
  const total = Number(load['totalAmount'] ?? 0);
  const caller = (load['caller'] ?? {}) as Record<string, unknown>;
  const entryAmounts = Array.from({ length: entries }, (_, i) => (i === 0 ? total : 100 + i * 25));
  const totalAmount = entryAmounts.reduce((a, b) => a + b, 0);
  const paidAmount = status === 'FULL_PAID' ? totalAmount : status === 'PARTIAL_PAID' ? Math.floor(totalAmount / 2) : 0;
  const referenceFields = {
    ContainerNo: String(load['containerNo'] ?? ''),
    PurchaseOrderNo: String(load['purchaseOrderNo'] ?? ''),
    ChassisNo: '',
    Master_bill_of_lading: '',
    PickUpNo: '',
    Vessel_name: '',
    House_bill_of_lading: '',
    Voayge: '',
    ReturnNo: String(load['returnNo'] ?? ''),
    Secondary_ReferenceNo: String(load['secondaryReferenceNo'] ?? ''),
    SealNo: '',
    ShipmentNo: String(load['shipmentNo'] ?? ''),
  };
  const callerDetails = { _id: caller['_id'], company_name: caller['company_name'], mcNumber: '', payment_terms: 30, currency: 'USD' };
  const main = ctx.variant === 'main';
  const invoice = entryAmounts.map((amount, i) => ({
    load_reference_number: ref,
    reference_number: i === 0 ? ref : `${ref}_${i}`,
    pricing: [{ dynamicPricingId: null, customerRateId: null, chargeType: 'MANUALLY_CHANGED', name: i === 0 ? 'Base Price' : 'Accessorial', perType: '', freeDays: 0, unit: '1.00', finalAmount: amount.toFixed(2), chargePerMinute: 0, chargePerDay: 0, amount: amount.toFixed(2), glCode: '4000', ...(main ? {} : { discountAmount: 0, discountValue: 0, units: 1 }) }],
    status,
    paidAmount: i === 0 ? paidAmount : 0,
    totalAmount: amount,
    remainAmount: i === 0 ? amount - Math.min(amount, paidAmount) : amount,
    totalTaxAmount: 0,
    taxAmount: 0,
    remainTaxAmount: 0,
    billingDate,
    caller: callerDetails,
    callerName: caller['company_name'],
    ...(main ? { branch: { _id: makeId(COLLECTION_CODES.misc, ctx.seed, 20), name: 'Main Branch' }, taxDetails: { taxRate: 0, taxNote: '', defaultTaxType: 'EXEMPT', taxType: '' }, chargeSetNumber: i === 0 ? ref : `${ref}_${i}`, billingNote: '' } : {}),
    referenceFields,
  }));
  const paymentHistory: Record<string, unknown>[] = [];
  if (paidAmount > 0) {
    paymentHistory.push(paymentEntry(ctx, position, 0, billingDate, paidAmount));
  }
  const record: Invoice = {
    _id: invoiceId(ctx, position),
    total: invoice.length,
    invoice,
    paymentHistory,
    status,
    paidAmount,
    totalAmount,
    remainAmount: totalAmount - paidAmount,
    billingDate,
    timestamp: billingDate,
    paymentReference: paidAmount > 0 ? `CHK${hashInt(ctx.seed, position, 40) % 1_000_000}` : '',
    lineItems: [],
    loadDetails: { _id: load['_id'], reference_number: ref, type_of_load: load['type_of_load'], containerNo: load['containerNo'] },
    referenceFields,
    createdAt: billingDate,
    updatedAt: billingDate,
  };
  if (main) {
    record['caller'] = callerDetails;
    record['branch'] = { _id: makeId(COLLECTION_CODES.misc, ctx.seed, 20), name: 'Main Branch' };
    record['taxDetails'] = { taxRate: 0, taxNote: '', defaultTaxType: 'EXEMPT', taxType: '' };
    record['chargeSetNumber'] = ref;
    record['billingNote'] = '';
  } else {
    record['customerDetails'] = callerDetails;
  }
  return record;
}

export function paymentEntry(ctx: DatasetContext, position: number, n: number, date: string, amount: number): Record<string, unknown> {
  const credit = hashInt(ctx.seed, position, 41 + n) % 10 === 0;
  return {
    paymentDate: date,
    paymentAmount: amount,
    checkNo: `CHK${hashInt(ctx.seed, position, 50 + n) % 1_000_000}`,
    currency: '$',
    documents: [],
    paymentBy: 'Sim Accounts',
    notes: '',
    paymentType: credit ? 'CREDIT_MEMO' : 'STANDARD',
    ...(credit ? { creditMemoNumber: `CM${hashInt(ctx.seed, position, 60 + n) % 100_000}` } : {}),
  };
}

/** Base invoice j belongs to base load loadOfInvoicePosition(j), billed at that load's updatedAt. */
export function generateBaseInvoice(ctx: DatasetContext, j: number, baseLoad: (p: number) => Load): Invoice {
  const p = loadOfInvoicePosition(j);
  const load = baseLoad(p);
  return buildInvoice(ctx, j, load, String(load['updatedAt']), baseInvoiceEntryCount(ctx, p), baseInvoiceStatus(ctx, p));
}

/** What the invoice list filters need from an overlay invoice. */
export interface InvoiceSummary {
  id: string;
  total: number;
  status: string;
  type_of_load: string;
  loadReference: string;
  entryReferences: string[];
  /** Load reference numbers of the entries (several for a combined invoice). */
  loadReferences: string[];
  deleted: boolean;
}

export function summarizeInvoice(invoice: Invoice): InvoiceSummary {
  const details = (invoice['loadDetails'] ?? {}) as Record<string, unknown>;
  const entries = (invoice['invoice'] as Array<Record<string, unknown>>) ?? [];
  return {
    id: String(invoice['_id']),
    total: Number(invoice['total']),
    status: String(invoice['status']),
    type_of_load: String(details['type_of_load'] ?? ''),
    loadReference: String(details['reference_number'] ?? ''),
    entryReferences: entries.map((e) => String(e['reference_number'])),
    loadReferences: [...new Set(entries.map((e) => String(e['load_reference_number'])))],
    deleted: invoice['isDeleted'] === true,
  };
}

/** A combined invoice holds the charge sets of several loads (of one customer). */
export function isCombinedSummary(summary: InvoiceSummary): boolean {
  return summary.loadReferences.length > 1;
}

/**
 * Spreads a paid amount over the entries in order (each entry is paid up to its total) and sets
 * the invoice-level amounts from the entries: one rule for payments, rebills and combinations.
 */
export function withAmounts(invoice: Invoice, status: string, paid: number, extra: Record<string, unknown> = {}): Invoice {
  let left = paid;
  const entries = ((invoice['invoice'] as Array<Record<string, unknown>>) ?? []).map((entry) => {
    const total = Number(entry['totalAmount']);
    const share = Math.min(total, Math.max(0, left));
    left -= share;
    return { ...entry, status, paidAmount: share, remainAmount: total - share };
  });
  const totalAmount = entries.reduce((sum, e) => sum + Number((e as Record<string, unknown>)['totalAmount']), 0);
  return { ...invoice, ...extra, invoice: entries, total: entries.length, status, paidAmount: paid, totalAmount, remainAmount: totalAmount - paid };
}
