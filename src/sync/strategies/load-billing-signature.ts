import { contentHash } from '../content-hash.js';
import type { RawRecord } from '../stream-definition.js';

/**
 * The load fields that mirror its invoice (spec §2.5: status, amounts, charges, payments, charge
 * sets). A payment moves `paidAmount`/`remainAmount`/`status`, a charge moves `pricing` and
 * `totalAmount`, a rebill reopens `status`, a void sends it back to `COMPLETED`; the loads' many
 * operational changes (times, notes, dispatch, documents) move none of them.
 */
const BILLING_FIELDS = [
  'status',
  'totalAmount',
  'paidAmount',
  'remainAmount',
  'isPaymentCompleted',
  'pricing',
  'additionalPricing',
  'paymentHistory',
  'chargeSets',
  'totalNumberOfChargeSets',
  'isDeleted',
] as const;

/**
 * A short hash of a load's billing fields. The invoices change feed uses it for one decision
 * only: whether an invoice the list omits (spanning several charge sets) must be fetched again
 * one by one when its load changed. Equal signatures mean the load changed in ways that do not
 * touch its invoice; anything the signature cannot see is left to the sweep (invoice-sweep.ts).
 */
export function loadBillingSignature(load: RawRecord): string {
  return contentHash('load-billing', BILLING_FIELDS.map((field) => load[field] ?? null));
}
