import { COLLECTION_CODES, makeId } from '../ids.js';
import { hashInt } from '../prng.js';
import { BILL_STATUSES, FIRST_NAMES, LAST_NAMES } from './constants.js';
import { iso, pad, type DatasetContext } from './context.js';
import { referenceNumberOf } from './loads.js';
import { customerId } from './customers.js';

export function billId(ctx: DatasetContext, p: number): string {
  return makeId(COLLECTION_CODES.bills, ctx.seed, p);
}

/** A vendor bill (§2.5, main only). */
export function generateBill(ctx: DatasetContext, p: number): Record<string, unknown> {
  const h = (n: number) => hashInt(ctx.seed, p, 300 + n);
  const timeline = ctx.timelines.bills;
  const loadPos = ctx.counts.loads > 0 ? h(1) % ctx.counts.loads : 0;
  const loadRef = referenceNumberOf(ctx, loadPos);
  const amount = 100 + (h(2) % 2000);
  const createdAt = iso(timeline.createdAtMs(p));
  const vendorName = `${FIRST_NAMES[h(3) % FIRST_NAMES.length]} ${LAST_NAMES[h(4) % LAST_NAMES.length]} Trucking`;
  const paid = h(5) % 3 === 0 ? amount : 0;
  return {
    _id: billId(ctx, p),
    billId: billId(ctx, p),
    billNumber: `BILL-${pad(p + 1, 7)}`,
    loadNumbers: [loadRef],
    chargeSetNumbers: [`${loadRef}_VP`],
    containerNo: [`TGHU${pad(h(6) % 10_000_000, 7)}`],
    carrier: makeId(COLLECTION_CODES.misc, ctx.seed, 1),
    billDate: createdAt,
    billDueDate: iso(timeline.createdAtMs(p) + 30 * 86_400_000),
    status: BILL_STATUSES[h(7) % 3],
    branch: [{ _id: makeId(COLLECTION_CODES.misc, ctx.seed, 20), name: 'Main Branch' }],
    chargeSets: [{ loadNumber: loadRef, chargeSetNumber: `${loadRef}_VP`, chargeSetId: makeId(COLLECTION_CODES.misc, ctx.seed, 5_000_000 + p), chargeSetType: 'DEFAULT', pricing: [] }],
    vendor: { vendorId: makeId(COLLECTION_CODES.misc, ctx.seed, 6_000_000 + (h(3) % 50)), vendorName, payment_terms: 30 },
    vendorName,
    customers: [{ customerId: customerId(ctx, 'customers', h(8) % ctx.counts.customers), customerName: 'Customer' }],
    totalAmount: amount,
    totalAmountWithTax: amount,
    totalAppliedCreditAmount: 0,
    totalCreditMemoAmount: 0,
    totalPaidAmount: paid,
    totalPaymentAmount: paid,
    totalRemainAmount: amount - paid,
    totalTaxAmount: 0,
    createdAt,
    updatedAt: iso(timeline.updatedAtMs(p)),
  };
}
