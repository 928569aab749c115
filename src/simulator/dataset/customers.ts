import { COLLECTION_CODES, makeId } from '../ids.js';
import { hashInt, hashPick } from '../prng.js';
import { CITIES, COMPANY_SUFFIXES, COMPANY_WORDS, FIRST_NAMES, LAST_NAMES } from './constants.js';
import { iso, pad, type DatasetContext } from './context.js';

export type CustomerKind = 'customers' | 'consignees';

export function customerId(ctx: DatasetContext, kind: CustomerKind, position: number): string {
  return makeId(kind === 'customers' ? COLLECTION_CODES.customers : COLLECTION_CODES.consignees, ctx.seed, position);
}

/** A customer-shaped record (§2.11); consignees use the same shape with their own type. */
export function generateCustomer(ctx: DatasetContext, kind: CustomerKind, p: number): Record<string, unknown> {
  const salt = kind === 'customers' ? 100 : 200;
  const h = (n: number) => hashInt(ctx.seed, p, salt + n);
  const [city, state, zip, lat, lng] = CITIES[h(1) % CITIES.length] as (typeof CITIES)[number];
  const name = `${hashPick(COMPANY_WORDS, ctx.seed, p, salt + 2)} ${hashPick(COMPANY_SUFFIXES, ctx.seed, p, salt + 3)} ${kind === 'customers' ? 'C' : 'N'}${pad(p + 1, 5)}`;
  const timeline = ctx.timelines[kind];
  const contact = `${hashPick(FIRST_NAMES, ctx.seed, p, salt + 4)} ${hashPick(LAST_NAMES, ctx.seed, p, salt + 5)}`;
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '.');
  const id = customerId(ctx, kind, p);
  const customerType = kind === 'consignees' ? ['consignee'] : h(6) % 5 === 0 ? ['ALL'] : h(6) % 3 === 0 ? ['caller', 'shipper'] : ['caller'];
  const address = `${100 + (h(7) % 900)} ${hashPick(COMPANY_WORDS, ctx.seed, p, salt + 8)} St`;
  return {
    _id: id,
    companyID: `${kind === 'customers' ? 'CUS' : 'CON'}${pad(p + 1, 6)}`,
    company_name: name,
    address: { address: `${address}, ${city}, ${state} ${zip}`, address1: address, city, state, country: 'US', zip_code: zip, lat, lng },
    address1: address,
    city,
    state,
    country: 'US',
    zip_code: zip,
    mobile: `+1555${pad(h(9) % 10_000_000, 7)}`,
    secondaryPhoneNo: '',
    email: `ops@${slug}.example`,
    billingEmail: `billing@${slug}.example`,
    extraEmail: '',
    qbEmail: '',
    receiverEmail: '',
    notificationEmails: '',
    main_contact_name: contact,
    secondary_contact_name: '',
    mcNumber: `MC${pad(h(10) % 1_000_000, 6)}`,
    currency: 'USD',
    payType: 'Check',
    portUsername: '',
    portPassword: '',
    carrier: makeId(COLLECTION_CODES.misc, ctx.seed, 1),
    credit_limit: 10_000 * (1 + (h(11) % 10)),
    payment_terms: [15, 30, 45, 60][h(12) % 4],
    balance: h(13) % 50_000,
    customerTags: [],
    customerType,
    emailStatuses: h(14) % 2 === 0 ? ['COMPLETED'] : [],
    assignedCSR: [],
    salesAgents: [],
    extraSubCustomer: [],
    employeeEmails: [],
    pdfMap: [],
    documents: [],
    newTerminal: [],
    officeHoursStart: null,
    officeHoursEnd: null,
    usageCount: h(15) % 500,
    geofence: { zoom: 15, polygon: [[[lng, lat], [lng + 0.01, lat], [lng + 0.01, lat + 0.01], [lng, lat]]], center: [lng, lat] },
    doc_all: false,
    doc_tir: false,
    doc_pod: true,
    doc_none: false,
    isSendEmailContainerReadyForPickup: false,
    isSendEmailLoadAccepted: false,
    isSendEmailContainerAdd: false,
    isSendEmailContainerAvailable: false,
    isSendEmailPricingDetailEmail: false,
    isSendEmailDeliveryAppointmentChanged: false,
    isTIROptional: false,
    canEditLoad: false,
    isSendPODEmail: false,
    isSendContainerNotification: false,
    isSendNotificationEmail: false,
    isEmailNeedToSend: false,
    isDeleted: false,
    account_hold: h(16) % 40 === 0,
    isAddressVerified: true,
    ...(ctx.variant === 'main' ? { isInvalid: false } : {}),
    createdAt: iso(timeline.createdAtMs(p)),
    updatedAt: iso(timeline.updatedAtMs(p)),
  };
}

const embedded = new WeakMap<Record<string, unknown>, Record<string, unknown>>();

/**
 * Small embedded form used inside loads and invoices. Memoised per record object: customer records
 * are immutable (changes replace the object), and loads embed them on every page.
 */
export function embedCustomer(record: Record<string, unknown>): Record<string, unknown> {
  let value = embedded.get(record);
  if (!value) {
    value = buildEmbedded(record);
    embedded.set(record, value);
  }
  return value;
}

function buildEmbedded(record: Record<string, unknown>): Record<string, unknown> {
  const address = record['address'] as Record<string, unknown> | undefined;
  return {
    _id: record['_id'],
    company_name: record['company_name'],
    zipcode: record['zip_code'],
    country: record['country'],
    state: record['state'],
    city: record['city'],
    address: { lng: address?.['lng'], lat: address?.['lat'], address: address?.['address'] },
    geofence: record['geofence'],
    isTIROptional: record['isTIROptional'],
  };
}
