/**
 * Enumerations of the spec (§2.6, §2.7, §3), shared by generators, validation and routes. The ones
 * production checks requests against (load types, preSetOrderStatus, upload document types, …)
 * come from src/api/spec-enums.ts, so the simulator and the client read the same copy.
 */
import { UPLOAD_DOCUMENT_TYPES } from '../../api/spec-enums.js';

/** Load statuses before billing, in the order the mutator advances them. */
export const LOAD_FLOW = ['PENDING', 'AVAILABLE', 'DISPATCHED', 'DROPPED', 'COMPLETED'] as const;
export const LOAD_HOLD_STATUSES = ['CUSTOMS HOLD', 'FREIGHT HOLD'] as const;
export const BILLED_STATUSES = ['BILLING', 'PARTIAL_PAID', 'FULL_PAID'] as const;
export const INVOICE_STATUSES = ['BILLING', 'REBILLING', 'PARTIAL_PAID', 'FULL_PAID', 'APPROVED'] as const;
export const BILL_STATUSES = ['PENDING', 'ACCEPTED', 'DECLINED'] as const;

/** Brokerage display names for status events (§3.1). */
export const BROKERAGE_STATUS_NAMES: Record<string, string> = {
  PENDING: 'Pending',
  AVAILABLE: 'Available',
  DISPATCHED: 'Dispatched',
  DROPPED: 'Dropped',
  COMPLETED: 'Completed',
  BILLING: 'Billing',
  PARTIAL_PAID: 'Billing',
  FULL_PAID: 'Billing',
  'CUSTOMS HOLD': 'Pending',
  'FREIGHT HOLD': 'Pending',
};

/** The list endpoint: `TIR - XLS` shows as `TIR`, and the last two are absent (§2.7). */
export const LISTED_DOCUMENT_TYPES: string[] = UPLOAD_DOCUMENT_TYPES.filter(
  (t) => t !== 'Per Diem' && t !== 'Booking Confirmation',
).map((t) => (t === 'TIR - XLS' ? 'TIR' : t));

export const CUSTOMER_DOCUMENT_TYPES = [
  'Customer Contract', 'Rate Confirmation', 'Email', 'Other', 'Credit App', 'Credit Report', 'Business License',
] as const;

/** Document upload → webhook event type (§6.3); other types emit no event. */
export const DOCUMENT_EVENT_TYPES: Record<string, string> = {
  'Proof of Delivery': 'document#pod_added',
  'TIR IN': 'document#tir_in_added',
  'TIR OUT': 'document#tir_out_added',
  'Delivery Order': 'document#delivery_order_added',
  Invoice: 'document#invoice_added',
  'Bill of Lading': 'document#bo_added',
  'Rate Con': 'document#rate_cron_added',
};

export const CITIES = [
  ['Newark', 'NJ', '07114', 40.7357, -74.1724],
  ['Long Beach', 'CA', '90802', 33.7701, -118.1937],
  ['Savannah', 'GA', '31401', 32.0809, -81.0912],
  ['Houston', 'TX', '77029', 29.7604, -95.3698],
  ['Chicago', 'IL', '60609', 41.8781, -87.6298],
  ['Seattle', 'WA', '98134', 47.6062, -122.3321],
  ['Norfolk', 'VA', '23510', 36.8508, -76.2859],
  ['Charleston', 'SC', '29401', 32.7765, -79.9311],
] as const;

export const COMPANY_WORDS = ['Acme', 'Blue', 'Harbor', 'Summit', 'Pioneer', 'Atlas', 'Coastal', 'Prime', 'Metro', 'Union', 'Delta', 'Orion'] as const;
export const COMPANY_SUFFIXES = ['Logistics', 'Imports', 'Trading', 'Foods', 'Retail', 'Supply', 'Distribution', 'Freight'] as const;
export const CONTAINER_OWNERS = ['MSCU', 'MAEU', 'CMAU', 'HLXU', 'OOLU', 'EGLV', 'TGHU', 'CSQU'] as const;
export const FIRST_NAMES = ['Ana', 'Ben', 'Carla', 'Dev', 'Elif', 'Femi', 'Gus', 'Hana', 'Ivo', 'Jo'] as const;
export const LAST_NAMES = ['Nguyen', 'Okafor', 'Schmidt', 'Rossi', 'Kim', 'Silva', 'Novak', 'Haddad'] as const;

export const CHARGE_CODES = [
  ['Base Price', 'BASE_PRICE', 'Line haul base price'],
  ['Fuel', 'FUEL', 'Fuel surcharge'],
  ['Chassis', 'CHASSIS', 'Chassis rental per day'],
  ['Detention', 'DETENTION', 'Detention at customer'],
  ['Storage', 'STORAGE', 'Yard storage'],
  ['Per Diem', 'PER_DIEM', 'Container per diem'],
  ['Pre Pull', 'PRE_PULL', 'Pre-pull charge'],
  ['Hazmat', 'HAZMAT', 'Hazardous materials'],
  ['Overweight', 'OVERWEIGHT', 'Overweight surcharge'],
  ['Tolls', 'TOLLS', 'Tolls'],
] as const;
