import {
  ACCEPT_REJECT_CODES,
  MILESTONES,
  appointmentChangedValues,
  brokerageEventTypeOfField,
  milestonePayload,
  tenderPayload,
  type Milestone,
  type TenderStatus,
} from './brokerage-events.js';
import type { Rec } from './collection.js';
import { BILLED_STATUSES, BROKERAGE_STATUS_NAMES } from './dataset/constants.js';
import type { CustomerKind } from './dataset/customers.js';
import { buildInvoice, paymentEntry, withAmounts } from './dataset/invoices.js';
import { referenceNumberOf, loadId, type Load } from './dataset/loads.js';
import type { SimStore } from './store.js';

/**
 * Every write to the simulated account. Each one stamps updatedAt with the server clock, writes the
 * audit record where the API has audits, and emits the §6.3 event into the event log (which the
 * webhook sender picks up).
 */

const FIELD_EVENTS: Array<[RegExp, string]> = [
  [/^status$/, 'load#status_updated'],
  [/^(freight|custom|carrierHold|brokerHold)$/, 'load#hold_updated'],
  [/^(driverOrder|routingOrder)$/, 'load#routing_update'],
  [/^(containerNo|purchaseOrderNo|secondaryReferenceNo|bookingNo|sealNo|shipmentNo|releaseNo|returnNo|callerPONo|doNo|DoNo|deliveryOrderNo|callerbillLandingNo|appointmentNo|reservationNo|pickupNo|items|otherReference)$/, 'load#reference_updated'],
  [/^(container(Size|Type|Owner)|chassis.*|grayChassis.*|grayContainer.*|genset|temperature|trailer.*|tareWeight|scac)$/, 'load#equipment_updated'],
  [/^(lastFreeDay|dischargedDate|outgateDate|emptyDay|freeReturnDate|ingateDate|readyToReturnDate|loadTime|containerAvailableDay|cutOff|return|vessel|loadAssignedDate)$/, 'load#dates_updated'],
];
const NOTE_FIELDS = new Set(['driverNote', 'officeNote', 'yardNote', 'billingNote', 'notes', 'instructionNote']);

export function eventTypeOfField(field: string): string {
  for (const [pattern, type] of FIELD_EVENTS) if (pattern.test(field)) return type;
  return 'load#info_updated';
}

export interface Actor {
  id: string;
  name: string;
}

export const API_ACTOR: Actor = { id: 'public-api', name: 'Public API' };
export const MUTATOR_ACTOR: Actor = { id: 'dispatcher-7', name: 'Dispatcher (simulated user)' };

export class Changes {
  constructor(
    private readonly store: SimStore,
    private readonly webhookUrl: () => string | null,
  ) {}

  private get ctx() {
    return this.store.ctx;
  }

  /** An `invoice#*` event (§6.4 shape: the invoice in `data`). */
  emitInvoiceEvent(eventType: string, invoice: Rec, changedValues: Record<string, unknown>): void {
    this.emit(eventType, { data: invoice, dbId: invoice['_id'], changedValues, eventType }, invoice);
  }

  /** `changed`: the record the event is about, whose updatedAt is when the change happened. */
  private emit(eventType: string, payload: Record<string, unknown>, changed: Rec): void {
    const updatedAt = changed['updatedAt'];
    this.store.events.emit(eventType, payload, this.webhookUrl(), typeof updatedAt === 'string' ? updatedAt : undefined);
  }

  private emitLoadEvent(eventType: string, load: Load, changedValues: Record<string, unknown>): void {
    const body = { changedValues, _id: load['_id'], reference_number: load['reference_number'], eventType };
    // Brokerage wraps load change payloads under `data` (§6.4).
    this.emit(eventType, this.ctx.variant === 'brokerage' ? { eventType, data: body } : body, load);
  }

  /** Applies field changes to a load; returns the new record. `now` lets a batch share one timestamp. */
  updateLoad(p: number, changes: Record<string, unknown>, actor: Actor, now = this.store.clock.iso()): Load {
    const { next, changed } = this.applyLoad(p, changes, actor, now);
    const brokerage = this.ctx.variant === 'brokerage';
    const byType = new Map<string, Record<string, unknown>>();
    for (const [key, value] of Object.entries(changed)) {
      const type = (brokerage ? brokerageEventTypeOfField(key) : undefined) ?? eventTypeOfField(key);
      const group = byType.get(type) ?? {};
      group[key] = value;
      byType.set(type, group);
    }
    for (const [type, values] of byType) {
      if (type === 'load#status_updated' && brokerage) {
        this.emitLoadEvent(type, next, { time: now, status: BROKERAGE_STATUS_NAMES[String(values['status'])] ?? values['status'] });
      } else if (type.startsWith('appointments#')) {
        this.emitLoadEvent(type, next, appointmentChangedValues(this.store, type, next));
      } else {
        this.emitLoadEvent(type, next, values);
      }
    }
    return next;
  }

  /** Brokerage: a milestone (e.g. `outgated`) sets its date and `milestoneStatus`; one `load#milestone`, no other event. */
  recordMilestone(p: number, event: Milestone, actor: Actor, now = this.store.clock.iso()): Load {
    const { next } = this.applyLoad(p, { milestoneStatus: event, [MILESTONES[event]]: now }, actor, now);
    this.emit('load#milestone', milestonePayload(next, event, now, now), next);
    return next;
  }

  /** Brokerage: a tender accepted or rejected (its EDI code kept in `acceptRejectCode`); one `tendor#status_changed`. */
  changeTender(p: number, status: TenderStatus, actor: Actor, now = this.store.clock.iso()): Load {
    const { next } = this.applyLoad(p, { acceptRejectCode: ACCEPT_REJECT_CODES[status] }, actor, now);
    this.emit('tendor#status_changed', tenderPayload(next, status), next);
    return next;
  }

  /** Stores a load's changes with their audit and billing consequences; events are the caller's. */
  private applyLoad(p: number, changes: Record<string, unknown>, actor: Actor, now: string): { next: Load; changed: Record<string, unknown> } {
    const old = this.store.loads.get(p);
    if (!old) throw new Error(`no load at ${p}`);
    const changed: Record<string, unknown> = {};
    const previous: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(changes)) {
      if (JSON.stringify(old[key]) === JSON.stringify(value)) continue;
      changed[key] = value;
      previous[key] = old[key];
    }
    const next: Load = { ...old, ...changed, updatedAt: now };
    if ('status' in changed) next['lastUpdatedStatusAt'] = now;
    this.store.loads.put(p, next);
    if (this.ctx.variant === 'main' && Object.keys(changed).length > 0) {
      const notes = Object.keys(changed).some((k) => NOTE_FIELDS.has(k));
      this.store.loadAudits.add({
        action: notes ? 'NOTES_UPDATE' : 'status' in changed ? 'STATUS_UPDATE' : 'LOAD_UPDATE',
        entityId: String(next['reference_number']),
        actorId: actor.id,
        actorDetail: { name: actor.name },
        createdAt: now,
        newData: changed,
      });
    }
    if ('status' in changed && (BILLED_STATUSES as readonly string[]).includes(String(changed['status']))) {
      this.ensureInvoice(p, now);
    }
    return { next, changed };
  }

  /** Creates a load from an already validated body. */
  createLoad(fields: Record<string, unknown>, actor: Actor, now = this.store.clock.iso()): { position: number; load: Load } {
    const p = this.store.loads.allocate();
    // Start from a generated record so every §2.6 field exists, then apply what the client sent.
    const template = this.store.loads.config.generate(p);
    const load: Load = {
      ...template,
      ...fields,
      _id: loadId(this.ctx, p),
      reference_number: referenceNumberOf(this.ctx, p),
      status: 'PENDING',
      isDeleted: false,
      paidAmount: 0,
      remainAmount: template['totalAmount'],
      isPaymentCompleted: false,
      documents: [],
      createdAt: now,
      updatedAt: now,
      lastUpdatedStatusAt: now,
    };
    this.store.loads.put(p, load);
    this.emitLoadEvent('load#created', load, { ...load });
    if (this.ctx.variant === 'main') {
      this.store.loadAudits.add({ action: 'LOAD_CREATED', entityId: String(load['reference_number']), actorId: actor.id, actorDetail: { name: actor.name }, createdAt: now, newData: { status: 'PENDING' } });
    }
    return { position: p, load };
  }

  deleteLoad(p: number, actor: Actor, now = this.store.clock.iso()): Load {
    return this.updateLoad(p, { isDeleted: true }, actor, now);
  }

  addLoadDocument(p: number, type: string, url: string, eventType: string | undefined, actor: Actor): Load {
    const load = this.store.loads.get(p) as Load;
    const documents = [...((load['documents'] as unknown[]) ?? []), { type, url }];
    const now = this.store.clock.iso();
    const next: Load = { ...load, documents, updatedAt: now };
    this.store.loads.put(p, next);
    if (eventType) {
      const body = { changedValues: { type, url }, _id: next['_id'], reference_number: next['reference_number'], eventType };
      this.emit(eventType, body, next);
    }
    if (this.ctx.variant === 'main') {
      this.store.loadAudits.add({ action: 'DOCUMENT_UPLOAD', entityId: String(next['reference_number']), actorId: actor.id, actorDetail: { name: actor.name }, createdAt: now, newData: { type, url } });
    }
    return next;
  }

  /** A load that reaches billing gets its invoice (and `invoice#created`); a voided one is billed anew. */
  ensureInvoice(p: number, now: string): void {
    if (this.store.liveInvoicePositionOfLoad(p) !== undefined) return;
    const load = this.store.loads.get(p) as Load;
    const j = this.store.invoices.allocate();
    // Every 9th new invoice spans several charge sets, like the base data.
    const entries = j % 9 === 4 ? 2 : 1;
    const invoice = buildInvoice(this.ctx, j, load, now, entries, 'BILLING');
    this.store.invoices.put(j, invoice);
    this.store.invoiceOfLoad.set(p, j);
    this.store.loadOfInvoice.set(j, p);
    this.emitInvoiceEvent('invoice#created', invoice, { status: 'BILLING' });
    if (entries > 1) this.emitInvoiceEvent('invoice#sub_bill_added', invoice, { total: entries });
  }

  /**
   * Records a payment: BILLING → PARTIAL_PAID → FULL_PAID (a rebilled invoice is paid the same
   * way); billingDate never moves. The loads the invoice covers change with it (updatedAt moves):
   * a primary or combined invoice sets their status and amounts, a sub-customer one only touches them.
   */
  payInvoice(j: number, actor: Actor, fraction: number, now = this.store.clock.iso()): Rec | undefined {
    const invoice = this.store.invoices.get(j);
    if (!invoice || invoice['status'] === 'FULL_PAID' || invoice['isDeleted'] === true) return undefined;
    const total = Number(invoice['totalAmount']);
    const paidBefore = Number(invoice['paidAmount']);
    const remain = total - paidBefore;
    const amount = invoice['status'] === 'PARTIAL_PAID' || fraction >= 1 ? remain : Math.max(1, Math.floor(remain * fraction));
    const paid = paidBefore + amount;
    const status = paid >= total ? 'FULL_PAID' : 'PARTIAL_PAID';
    const history = [...((invoice['paymentHistory'] as Rec[]) ?? [])];
    history.push(paymentEntry(this.ctx, j, history.length, now, amount));
    const next = withAmounts(invoice, status, paid, { paymentHistory: history, paymentReference: String(history[history.length - 1]?.['checkNo'] ?? ''), updatedAt: now });
    this.store.invoices.put(j, next);
    this.emitInvoiceEvent('invoice#charges_updated', next, { status, paidAmount: paid, remainAmount: total - paid });
    this.syncLoadsOf(j, next, actor, now);
    return next;
  }

  /** The loads of an invoice follow it: status and amounts (primary, combined), or only updatedAt (sub-customer). */
  syncLoadsOf(j: number, invoice: Rec, actor: Actor, now: string): void {
    const sub = this.store.subCustomerInvoiceIds.has(String(invoice['_id']));
    const entries = (invoice['invoice'] as Rec[]) ?? [];
    for (const p of this.store.loadPositionsOfInvoice(j)) {
      if (!this.store.loads.exists(p)) continue;
      if (sub) {
        this.updateLoad(p, {}, actor, now);
        continue;
      }
      const ref = referenceNumberOf(this.ctx, p);
      const own = entries.filter((e) => e['load_reference_number'] === ref);
      const paid = own.reduce((sum, e) => sum + Number(e['paidAmount']), 0);
      const remain = own.reduce((sum, e) => sum + Number(e['remainAmount']), 0);
      const status = String(invoice['status']);
      this.updateLoad(p, { status: status === 'REBILLING' ? 'PARTIAL_PAID' : status, paidAmount: paid, remainAmount: remain, isPaymentCompleted: status === 'FULL_PAID' }, actor, now);
    }
  }

  updateCustomer(kind: CustomerKind, p: number, changes: Record<string, unknown>, actor: Actor, action = 'UPDATE', now = this.store.clock.iso()): Rec {
    const collection = kind === 'customers' ? this.store.customers : this.store.consignees;
    const old = collection.get(p) as Rec;
    const oldData: Rec = {};
    for (const key of Object.keys(changes)) oldData[key] = old[key];
    const next: Rec = { ...old, ...changes, updatedAt: now };
    collection.put(p, next);
    if (this.ctx.variant === 'main') {
      this.store.customerAudits.add({ action, entityId: String(next['_id']), actorId: actor.id, actorDetail: { name: actor.name }, createdAt: now, newData: changes, oldData });
    }
    return next;
  }

  createCustomer(kind: CustomerKind, fields: Record<string, unknown>, actor: Actor): { position: number; record: Rec } {
    const collection = kind === 'customers' ? this.store.customers : this.store.consignees;
    const p = collection.allocate();
    const now = this.store.clock.iso();
    const template = collection.config.generate(p);
    const record: Rec = { ...template, ...fields, _id: collection.config.id(p), isDeleted: false, createdAt: now, updatedAt: now };
    collection.put(p, record);
    if (this.ctx.variant === 'main') {
      this.store.customerAudits.add({ action: 'ADD', entityId: String(record['_id']), actorId: actor.id, actorDetail: { name: actor.name }, createdAt: now, newData: fields, oldData: {} });
    }
    return { position: p, record };
  }

  updateSimple(collectionName: 'bills' | 'supportMoves', p: number, changes: Record<string, unknown>, now = this.store.clock.iso()): Rec {
    const collection = this.store[collectionName];
    const next: Rec = { ...(collection.get(p) as Rec), ...changes, updatedAt: now };
    collection.put(p, next);
    return next;
  }
}
