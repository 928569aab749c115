import { PRE_SET_ORDER_STATUS, TYPE_OF_LOAD } from '../../api/spec-enums.js';
import { COLLECTION_CODES, makeId } from '../ids.js';
import { hashInt, hashUnit } from '../prng.js';
import {
  CONTAINER_OWNERS,
  FIRST_NAMES,
  LAST_NAMES,
  LOAD_FLOW,
  LOAD_HOLD_STATUSES,
} from './constants.js';
import { iso, pad, type DatasetContext } from './context.js';
import { customerId, embedCustomer } from './customers.js';

/**
 * Base loads are pure functions of (seed, position). Everything a list filter or key lookup needs
 * (`loadAttrs`) is cheap to compute, and the key fields are invertible (`positionsFor*`), so
 * `reference_numbers`, `containerNo` and `searchTerm` never scan a million generated loads.
 */

export type Load = Record<string, unknown>;
export type CustomerLookup = (kind: 'customers' | 'consignees', position: number) => Record<string, unknown>;

const REF_DIGITS = 8;
const CONTAINER_MOD = 10_000_000;
const CONTAINER_MUL = 7919;
const CONTAINER_INV = modInverse(CONTAINER_MUL, CONTAINER_MOD);

function modInverse(a: number, m: number): number {
  let [oldR, r] = [a, m];
  let [oldS, s] = [1, 0];
  while (r !== 0) {
    const q = Math.floor(oldR / r);
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}

export function refPrefix(ctx: DatasetContext): string {
  return ctx.variant === 'main' ? 'M' : 'BRK';
}

export function loadId(ctx: DatasetContext, p: number): string {
  return makeId(COLLECTION_CODES.loads, ctx.seed, p);
}

/** Every 997th reference number carries a `/` so that unsafe file names and unencoded paths show. */
export function referenceNumberOf(ctx: DatasetContext, p: number): string {
  const n = p + 1;
  return `${refPrefix(ctx)}${pad(n, REF_DIGITS)}${n % 997 === 0 ? '/1' : ''}`;
}

export function positionOfReference(ctx: DatasetContext, ref: string): number | undefined {
  const prefix = refPrefix(ctx);
  if (!ref.startsWith(prefix)) return undefined;
  const match = /^(\d+)(\/1)?$/.exec(ref.slice(prefix.length));
  if (!match) return undefined;
  const p = Number(match[1]) - 1;
  if (!Number.isSafeInteger(p) || p < 0) return undefined;
  return referenceNumberOf(ctx, p) === ref ? p : undefined;
}

export function containerNoOf(ctx: DatasetContext, p: number): string {
  const owner = CONTAINER_OWNERS[p % CONTAINER_OWNERS.length] as string;
  const digits = (((p % CONTAINER_MOD) * CONTAINER_MUL + (ctx.seed >>> 0)) % CONTAINER_MOD + CONTAINER_MOD) % CONTAINER_MOD;
  return `${owner}${pad(digits, 7)}`;
}

export function positionsOfContainer(ctx: DatasetContext, value: string): number[] {
  const match = /^([A-Z]{4})(\d{7})$/.exec(value.toUpperCase());
  if (!match) return [];
  const digits = Number(match[2]);
  const base = ((((digits - (ctx.seed >>> 0)) % CONTAINER_MOD) + CONTAINER_MOD) % CONTAINER_MOD * CONTAINER_INV) % CONTAINER_MOD;
  const found: number[] = [];
  // Positions beyond 10^7 repeat the digit pattern; walk the few congruent ones.
  for (let p = base; p < ctx.counts.loads; p += CONTAINER_MOD) {
    if (containerNoOf(ctx, p) === value.toUpperCase()) found.push(p);
  }
  return found;
}

export function secondaryRefOf(p: number): string {
  return `SR${pad(p + 1, REF_DIGITS)}`;
}

export function purchaseOrderOf(p: number): string {
  return `PO${pad(p + 1, REF_DIGITS)}`;
}

function positionOfPrefixed(prefix: string, value: string): number | undefined {
  const match = new RegExp(`^${prefix}(\\d{${REF_DIGITS}})$`).exec(value);
  return match ? Number(match[1]) - 1 : undefined;
}

/** Base positions whose reference_number, containerNo, secondaryReferenceNo or purchaseOrderNo equals term. */
export function positionsForTerm(ctx: DatasetContext, term: string): number[] {
  const found = new Set<number>();
  const ref = positionOfReference(ctx, term);
  if (ref !== undefined) found.add(ref);
  for (const p of positionsOfContainer(ctx, term)) found.add(p);
  const sr = positionOfPrefixed('SR', term);
  if (sr !== undefined) found.add(sr);
  const po = positionOfPrefixed('PO', term);
  if (po !== undefined) found.add(po);
  return [...found].filter((p) => p >= 0 && p < ctx.counts.loads);
}

/** A base load reached billing iff its position is 1 or 3 mod 5: invoice positions are arithmetic. */
export function isBilledBase(p: number): boolean {
  const r = p % 5;
  return r === 1 || r === 3;
}

export function billedCount(loads: number): number {
  return 2 * Math.floor(loads / 5) + (loads % 5 > 3 ? 2 : loads % 5 > 1 ? 1 : 0);
}

/** j-th billed base load → load position. */
export function loadOfInvoicePosition(j: number): number {
  return 5 * Math.floor(j / 2) + (j % 2 === 0 ? 1 : 3);
}

export function invoicePositionOfLoad(p: number): number | undefined {
  if (!isBilledBase(p)) return undefined;
  return 2 * Math.floor(p / 5) + (p % 5 === 1 ? 0 : 1);
}

export function baseInvoiceStatus(ctx: DatasetContext, loadPosition: number): string {
  const u = hashUnit(ctx.seed, loadPosition, 11);
  return u < 0.35 ? 'BILLING' : u < 0.55 ? 'PARTIAL_PAID' : 'FULL_PAID';
}

/** Base invoices with several charge sets (omitted from the list endpoint). */
export function baseInvoiceEntryCount(ctx: DatasetContext, loadPosition: number): number {
  const h = hashInt(ctx.seed, loadPosition, 12);
  return h % 9 === 0 ? 2 + (h % 2) : 1;
}

export interface LoadAttrs {
  status: string;
  type_of_load: string;
  callerId: string;
  isDeleted: boolean;
  hazmat: boolean;
  isHot: boolean;
}

export function baseLoadAttrs(ctx: DatasetContext, p: number): LoadAttrs {
  let status: string;
  if (isBilledBase(p)) status = baseInvoiceStatus(ctx, p);
  else {
    const h = hashInt(ctx.seed, p, 2) % 20;
    status = h < 2 ? (LOAD_HOLD_STATUSES[h] as string) : (LOAD_FLOW[h % LOAD_FLOW.length] as string);
  }
  return {
    status,
    type_of_load: TYPE_OF_LOAD[hashInt(ctx.seed, p, 3) % 7 % 4] as string,
    callerId: customerId(ctx, 'customers', hashInt(ctx.seed, p, 4) % ctx.counts.customers),
    isDeleted: false,
    hazmat: hashInt(ctx.seed, p, 5) % 17 === 0,
    isHot: hashInt(ctx.seed, p, 6) % 13 === 0,
  };
}

export function recordLoadAttrs(load: Load): LoadAttrs {
  const caller = load['caller'] as { _id?: string } | undefined;
  return {
    status: String(load['status']),
    type_of_load: String(load['type_of_load']),
    callerId: caller?._id ?? '',
    isDeleted: load['isDeleted'] === true,
    hazmat: load['hazmat'] === true,
    isHot: load['isHot'] === true,
  };
}

/** What list filters need from an overlay load; stored instead of the whole record. */
export interface LoadSummary extends LoadAttrs {
  reference_number: string;
  containerNo: string;
  secondaryReferenceNo: string;
  purchaseOrderNo: string;
}

export function summarizeLoad(load: Load): LoadSummary {
  return {
    ...recordLoadAttrs(load),
    reference_number: String(load['reference_number'] ?? ''),
    containerNo: String(load['containerNo'] ?? ''),
    secondaryReferenceNo: String(load['secondaryReferenceNo'] ?? ''),
    purchaseOrderNo: String(load['purchaseOrderNo'] ?? ''),
  };
}

function location(customer: Record<string, unknown>): Record<string, unknown> {
  const embedded = embedCustomer(customer);
  return {
    zipcode: embedded['zipcode'],
    country: embedded['country'],
    state: embedded['state'],
    city: embedded['city'],
    address: embedded['address'],
    company_name: embedded['company_name'],
  };
}

export function generateLoad(ctx: DatasetContext, lookup: CustomerLookup, p: number): Load {
  const attrs = baseLoadAttrs(ctx, p);
  const h = (n: number) => hashInt(ctx.seed, p, 20 + n);
  const createdMs = ctx.timelines.loads.createdAtMs(p);
  const updatedMs = ctx.timelines.loads.updatedAtMs(p);
  const day = 86_400_000;
  const callerPos = hashInt(ctx.seed, p, 4) % ctx.counts.customers;
  const shipperPos = h(1) % ctx.counts.customers;
  const consigneePos = h(2) % ctx.counts.consignees;
  const caller = lookup('customers', callerPos);
  const shipper = lookup('customers', shipperPos);
  const consignee = lookup('consignees', consigneePos);
  const id = loadId(ctx, p);
  const total = 300 + (h(3) % 3000);
  const paid = attrs.status === 'FULL_PAID' ? total : attrs.status === 'PARTIAL_PAID' ? Math.floor(total / 2) : 0;
  const driverName = `${FIRST_NAMES[h(4) % FIRST_NAMES.length]} ${LAST_NAMES[h(5) % LAST_NAMES.length]}`;
  const brokerage = ctx.variant === 'brokerage';
  const order = ['PULLCONTAINER', 'DELIVERLOAD', 'RETURNCONTAINER'].map((type, i) => {
    const place = type === 'DELIVERLOAD' ? consignee : shipper;
    const stop: Record<string, unknown> = {
      isVoidOut: false,
      distance: 5 + ((h(6) + i) % 60),
      address: { address: place['address1'], lat: 0, lng: 0 },
      _id: makeId(COLLECTION_CODES.misc, ctx.seed, p * 4 + i + 1_000_000),
      company_name: place['company_name'],
      zip_code: place['zip_code'],
      country: 'US',
      state: place['state'],
      city: place['city'],
      customerId: embedCustomer(place),
      type,
    };
    if (brokerage) {
      stop['isBobtail'] = false;
      stop['isGrayPool'] = false;
      stop['priority'] = i + 1;
    }
    return stop;
  });
  const pickupFrom = createdMs + day;
  const load: Load = {
    _id: id,
    reference_number: referenceNumberOf(ctx, p),
    type_of_load: attrs.type_of_load,
    preSetOrderStatus: PRE_SET_ORDER_STATUS[h(7) % PRE_SET_ORDER_STATUS.length],
    status: attrs.status,
    lastUpdatedStatusAt: iso(updatedMs),
    callerName: caller['company_name'],
    shipperName: shipper['company_name'],
    shipperAddress: shipper['address1'],
    consigneeName: consignee['company_name'],
    consigneeAddress: consignee['address1'],
    acceptRejectCode: '',
    returnNo: '',
    shipmentNo: `SH${pad(h(8) % 1_000_000, 6)}`,
    purchaseOrderNo: purchaseOrderOf(p),
    secondaryReferenceNo: secondaryRefOf(p),
    containerNo: containerNoOf(ctx, p),
    containerSize: ["20'", "40'", "45'"][h(9) % 3],
    containerType: ['ST', 'HC', 'RF'][h(10) % 3],
    taxNote: '',
    taxRate: '0',
    taxType: '',
    freight: h(11) % 9 === 0 ? 'HOLD' : 'RELEASED',
    custom: h(12) % 11 === 0 ? 'HOLD' : 'RELEASED',
    routeType: h(13) % 4 === 0 ? 'Highway' : 'Local',
    defaultTaxType: 'EXEMPT',
    distance: 10 + (h(14) % 400),
    weight: 1_000 + (h(15) % 40_000),
    totalWeight: 1_000 + (h(15) % 40_000),
    radio: 0,
    totalMiles: 10 + (h(14) % 400),
    totalNumberOfChargeSets: ctx.variant === 'main' ? (isBilledBase(p) ? baseInvoiceEntryCount(ctx, p) : 1) : 0,
    totalAmount: total,
    paidAmount: paid,
    remainAmount: total - paid,
    isStatusOrderMigrated: false,
    isEdi: h(16) % 10 === 0,
    isMigrated: false,
    carrierHold: false,
    brokerHold: false,
    overWeight: h(17) % 25 === 0,
    isConfirm: true,
    isLoadDropAtPull: false,
    isLoadDropAtYard: false,
    isHot: attrs.isHot,
    hot: attrs.isHot,
    isReadyForPickup: h(18) % 2 === 0,
    isloadStartable: true,
    isNextContainerNeedToPickup: false,
    isPrePullCharge: false,
    isReUse: false,
    isLive: h(19) % 3 === 0,
    isPaymentCompleted: attrs.status === 'FULL_PAID',
    isDeleted: false,
    hazmat: attrs.hazmat,
    scale: false,
    createdAt: iso(createdMs),
    updatedAt: iso(updatedMs),
    returnFromTime: iso(createdMs + 5 * day),
    returnToTime: iso(createdMs + 6 * day),
    lastFreeDay: iso(createdMs + 4 * day),
    dischargedDate: iso(createdMs - day),
    outgateDate: iso(createdMs + day),
    emptyDay: iso(createdMs + 3 * day),
    freeReturnDate: iso(createdMs + 7 * day),
    ingateDate: iso(createdMs + 5 * day),
    readyToReturnDate: iso(createdMs + 3 * day),
    loadTime: iso(createdMs + 2 * day),
    containerAvailableDay: iso(createdMs),
    cutOff: iso(createdMs + 8 * day),
    return: iso(createdMs + 5 * day),
    vessel: { eta: iso(createdMs - 2 * day) },
    caller: embedCustomer(caller),
    carrier: { _id: makeId(COLLECTION_CODES.misc, ctx.seed, 1), company_name: 'Simulated Carrier' },
    addedBy: { _id: makeId(COLLECTION_CODES.misc, ctx.seed, 2), lastName: 'Operator', name: 'Sim' },
    shipperInfo: location(shipper),
    consigneeInfo: location(consignee),
    pricing: [
      { name: 'Base Price', amount: String(total), chargePerDay: 0, chargePerMinute: 0, finalAmount: String(total), unit: '1.00', freeDays: 0, perType: '', chargeType: 'MANUALLY_CHANGED', customerRateId: null, dynamicPricingId: null, glCode: '4000' },
    ],
    expense: [],
    customerEmployee: [],
    documents: [],
    statusOrder: [],
    expenseHistory: [],
    paymentHistory: [],
    statusHistory: [],
    items: [],
    additionalPricing: [],
    deliveryTimes: [{ customerId: consignee['_id'], _id: makeId(COLLECTION_CODES.misc, ctx.seed, p * 4 + 3_000_000), deliveryFromTime: iso(pickupFrom + day), deliveryToTime: iso(pickupFrom + day + 4 * 3_600_000) }],
    pickupTimes: [{ customerId: shipper['_id'], _id: makeId(COLLECTION_CODES.misc, ctx.seed, p * 4 + 2_000_000), pickupFromTime: iso(pickupFrom), pickupToTime: iso(pickupFrom + 4 * 3_600_000) }],
    assignedCSR: [],
    consignee: [consignee['_id']],
    shipper: [shipper['_id']],
  };
  if (ctx.variant === 'main') {
    load['driverName'] = driverName;
    load['allowDriverCompletion'] = false;
    load['driverOrder'] = order;
    load['nextDriverOrderId'] = null;
  } else {
    load['carrierName'] = driverName;
    load['allowCarrierCompletion'] = false;
    load['routingOrder'] = order;
    load['nextRoutingOrderId'] = null;
    load['terminal'] = { _id: makeId(COLLECTION_CODES.misc, ctx.seed, 10 + (h(20) % 4)), name: `Terminal ${1 + (h(20) % 4)}` };
    load['milestoneStatus'] = attrs.status === 'PENDING' ? 'Pending' : 'Dispatched';
    load['items'] = [{ _id: makeId(COLLECTION_CODES.misc, ctx.seed, p + 4_000_000), palletsUnits: 'Pallets', pallets: 10, weightUnitType: 'LBS', weightKgs: 1000, weight: 2204, units: 10, pieces: 100, description: 'General cargo', commodity: 'FAK' }];
  }
  return load;
}

/** chargeSets / vendorPay are derived on the way out (main only, when asked for). */
export function chargeSetsOf(load: Load, entries: number): Record<string, unknown>[] {
  const total = Number(load['totalAmount'] ?? 0);
  const caller = load['caller'] as Record<string, unknown> | undefined;
  const ref = String(load['reference_number']);
  return Array.from({ length: Math.max(1, entries) }, (_, i) => ({
    chargeSetNumber: `${ref}${i === 0 ? '' : `_${i}`}`,
    chargeSetId: `${String(load['_id'])}${i}`,
    chargeSetType: i === 0 ? 'DEFAULT' : 'SUB_BILL',
    pricing: load['pricing'],
    totalAmount: i === 0 ? total : 100,
    taxAmount: 0,
    totalAmountWithTax: i === 0 ? total : 100,
    billingNote: '',
    approvedDate: load['updatedAt'],
    createdAt: load['createdAt'],
    updatedAt: load['updatedAt'],
    status: 'APPROVED',
    customer: { customerName: caller?.['company_name'], customerId: caller?.['_id'] },
    currency: { currencyCode: 'USD', symbol: '$', name: 'US Dollar' },
    terminal: '',
    invoice: { invoiceData: load['updatedAt'], invoiceNumber: `${ref}${i === 0 ? '' : `_${i}`}`, invoiceDueDate: load['updatedAt'] },
  }));
}

export function vendorPayOf(load: Load): Record<string, unknown>[] {
  return [
    {
      chargeSetNumber: `${String(load['reference_number'])}_VP`,
      chargeSetId: `${String(load['_id'])}vp`,
      chargeSetType: 'DEFAULT',
      pricing: [],
      totalAmount: Math.floor(Number(load['totalAmount'] ?? 0) * 0.6),
      taxAmount: 0,
      totalAmountWithTax: Math.floor(Number(load['totalAmount'] ?? 0) * 0.6),
      billingNote: '',
      approvedDate: load['updatedAt'],
      createdAt: load['createdAt'],
      updatedAt: load['updatedAt'],
      status: 'APPROVED',
      vendor: { vendorName: String(load['driverName'] ?? ''), vendorId: String(load['_id']).slice(0, 12) },
      currency: { currencyCode: 'USD', symbol: '$', name: 'US Dollar' },
      terminal: '',
      bill: { billDate: load['updatedAt'], billDueDate: load['updatedAt'], billNumber: `B-${String(load['reference_number'])}` },
    },
  ];
}

