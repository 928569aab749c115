import type { Rec } from './collection.js';
import { embedCustomer } from './dataset/customers.js';
import type { Load } from './dataset/loads.js';
import type { SimStore } from './store.js';

/**
 * The brokerage-only events of spec §6.3 and their §6.4 payloads. Appointment changes on brokerage
 * come as `appointments#*` (main folds them into `load#info_updated`); milestones and tenders have
 * events of their own with their own shapes.
 */

/** Load fields whose change is an appointment event on brokerage. */
const APPOINTMENT_FIELDS: Array<[RegExp, string]> = [
  [/^pickupTimes$/, 'appointments#port_pickup'],
  [/^deliveryTimes$/, 'appointments#consignee'],
  [/^(returnFromTime|returnToTime|emptyOrigin)$/, 'appointments#port_return'],
];

export function brokerageEventTypeOfField(field: string): string | undefined {
  for (const [pattern, type] of APPOINTMENT_FIELDS) if (pattern.test(field)) return type;
  return undefined;
}

/** Milestones (§6.4: `event`, the value `outgated` occurs) and the load date each one sets. */
export const MILESTONES = { discharged: 'dischargedDate', outgated: 'outgateDate', ingated: 'ingateDate' } as const;
export type Milestone = keyof typeof MILESTONES;

export const TENDER_STATUSES = ['accepted', 'rejected'] as const;
export type TenderStatus = (typeof TENDER_STATUSES)[number];

/** EDI 990 answer codes, kept in the load's `acceptRejectCode` (§2.6) so a refresh sees the tender change. */
export const ACCEPT_REJECT_CODES: Record<TenderStatus, string> = { accepted: 'A', rejected: 'D' };

/** `customerId` of an appointment as §6.4 shows it: an embedded object {`_id`, `company_name`, `address`}. */
function embeddedParty(store: SimStore, value: unknown): unknown {
  if (typeof value === 'object' && value !== null) return value;
  if (typeof value !== 'string') return value;
  for (const kind of ['customers', 'consignees'] as const) {
    const p = store.customerPositionById(kind, value);
    const record = p === undefined ? undefined : (kind === 'customers' ? store.customers : store.consignees).get(p);
    if (record) {
      const { _id, company_name, address } = embedCustomer(record) as Rec;
      return { _id, company_name, address };
    }
  }
  return { _id: value };
}

/**
 * `changedValues` of an appointment event (§6.4): the load's whole `pickupTimes` or
 * `deliveryTimes` with embedded customers, or the return window with the embedded empty origin
 * (the load's first shipper, the port, when it names none).
 */
export function appointmentChangedValues(store: SimStore, eventType: string, load: Load): Record<string, unknown> {
  const times = (field: 'pickupTimes' | 'deliveryTimes') =>
    ((load[field] as Rec[] | undefined) ?? []).map((t) => ({ ...t, customerId: embeddedParty(store, t['customerId']) }));
  if (eventType === 'appointments#port_pickup') return { pickupTimes: times('pickupTimes') };
  if (eventType === 'appointments#consignee') return { deliveryTimes: times('deliveryTimes') };
  const origin = load['emptyOrigin'] ?? ((load['shipper'] as unknown[] | undefined) ?? [])[0];
  return { emptyOrigin: embeddedParty(store, origin), returnFromTime: load['returnFromTime'], returnToTime: load['returnToTime'] };
}

/** `load#milestone` (§6.4): flat, with `timestamp` and {`eventTime`, `event`}. */
export function milestonePayload(load: Load, event: Milestone, eventTime: string, now: string): Record<string, unknown> {
  return { eventType: 'load#milestone', reference_number: load['reference_number'], timestamp: now, changedValues: { eventTime, event } };
}

/** `tendor#status_changed` (§6.4, spelled as the spec does): flat, with the tender's references. */
export function tenderPayload(load: Load, status: TenderStatus): Record<string, unknown> {
  const ref = String(load['reference_number']);
  return {
    eventType: 'tendor#status_changed',
    reference_number: ref,
    tenderReferenceNumber: `TND-${ref}`,
    carrierLoadReferenceNumber: `CL-${ref}`,
    changedValues: { status },
  };
}
