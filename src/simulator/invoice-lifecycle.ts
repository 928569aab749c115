import type { Actor, Changes } from './changes.js';
import type { Rec } from './collection.js';
import { baseLoadAttrs } from './dataset/loads.js';
import { buildInvoice, invoiceId, withAmounts } from './dataset/invoices.js';
import type { Prng } from './prng.js';
import type { SimStore } from './store.js';

/**
 * What happens to invoices after billing (design §2.4), for the mutator when `invoiceLifecycle`
 * is on: a charge added to a paid invoice (rebill), a sub-customer charge set billed on its own
 * invoice, invoices of several loads of one customer combined into one, an invoice voided. Each
 * one moves the updatedAt of every load it touches — the change signal a client can follow.
 */
export class InvoiceLifecycle {
  constructor(
    private readonly store: SimStore,
    private readonly changes: Changes,
    private readonly rng: Prng,
    private readonly actor: Actor,
  ) {}

  /** One lifecycle change, chosen at random; false when no invoice fitted. */
  step(): boolean {
    const r = this.rng.next();
    if (r < 0.45) return this.rebill();
    if (r < 0.7) return this.addSubCustomerInvoice();
    if (r < 0.85) return this.combine();
    return this.void();
  }

  /** A live invoice position matching `accept`, biased like the mutator: any, or one created since start. */
  private pick(accept: (invoice: Rec, j: number) => boolean): number | undefined {
    const invoices = this.store.invoices;
    for (let attempt = 0; attempt < 12; attempt++) {
      const created = invoices.size - invoices.baseCount;
      const j = created > 0 && this.rng.chance(0.5) ? invoices.baseCount + this.rng.int(created) : this.rng.int(invoices.size);
      const invoice = invoices.get(j);
      if (invoice && invoice['isDeleted'] !== true && accept(invoice, j)) return j;
    }
    return undefined;
  }

  /** A charge added to a FULL_PAID invoice: amounts grow, status back to PARTIAL_PAID or REBILLING. */
  rebill(): boolean {
    const j = this.pick((invoice) => invoice['status'] === 'FULL_PAID');
    if (j === undefined) return false;
    const invoice = this.store.invoices.get(j) as Rec;
    const now = this.store.clock.iso();
    const charge = 25 + this.rng.int(400);
    const entries = ((invoice['invoice'] as Rec[]) ?? []).map((entry, i) => {
      if (i !== 0) return entry;
      const pricing = [...((entry['pricing'] as Rec[]) ?? []), { ...(((entry['pricing'] as Rec[]) ?? [])[0] ?? {}), name: 'Rebill charge', chargeType: 'MANUALLY_CHANGED', amount: charge.toFixed(2), finalAmount: charge.toFixed(2) }];
      return { ...entry, pricing, totalAmount: Number(entry['totalAmount']) + charge };
    });
    const status = this.rng.chance(0.5) ? 'PARTIAL_PAID' : 'REBILLING';
    const next = withAmounts({ ...invoice, invoice: entries }, status, Number(invoice['paidAmount']), { updatedAt: now });
    this.store.invoices.put(j, next);
    this.changes.emitInvoiceEvent('invoice#charges_updated', next, { status, totalAmount: next['totalAmount'] });
    this.changes.syncLoadsOf(j, next, this.actor, now);
    return true;
  }

  /** A charge set billed to a sub-customer: its own invoice, listed only with `isSubCustomer`. */
  addSubCustomerInvoice(): boolean {
    const j = this.pick((_invoice, position) => !this.store.subCustomerInvoiceIds.has(invoiceId(this.store.ctx, position)) && this.store.loadPositionsOfInvoice(position).length === 1);
    if (j === undefined) return false;
    const p = this.store.loadPositionOfInvoice(j);
    const load = this.store.loads.get(p);
    if (!load || load['isDeleted'] === true) return false;
    const now = this.store.clock.iso();
    const js = this.store.invoices.allocate();
    const subs = this.store.subInvoicesOfLoad.get(p) ?? [];
    const number = `${String(load['reference_number'])}_SUB${subs.length + 1}`;
    const subCustomer = this.store.customers.get(this.rng.int(this.store.customers.baseCount)) ?? {};
    const caller = { _id: subCustomer['_id'], company_name: subCustomer['company_name'], mcNumber: '', payment_terms: 30, currency: 'USD' };
    const base = buildInvoice(this.store.ctx, js, load, now, 1, 'BILLING');
    const amount = 50 + this.rng.int(300);
    const entries = ((base['invoice'] as Rec[]) ?? []).map((entry) => ({
      ...entry,
      reference_number: number,
      ...(entry['chargeSetNumber'] !== undefined ? { chargeSetNumber: number } : {}),
      caller,
      callerName: caller.company_name,
      totalAmount: amount,
      pricing: ((entry['pricing'] as Rec[]) ?? []).map((line) => ({ ...line, name: 'Sub-customer charge', amount: amount.toFixed(2), finalAmount: amount.toFixed(2) })),
    }));
    const customerField = this.store.ctx.variant === 'main' ? { caller, chargeSetNumber: number } : { customerDetails: caller };
    const invoice = withAmounts({ ...base, invoice: entries, ...customerField }, 'BILLING', 0);
    this.store.subCustomerInvoiceIds.add(String(invoice['_id']));
    this.store.invoices.put(js, invoice);
    this.store.loadOfInvoice.set(js, p);
    this.store.subInvoicesOfLoad.set(p, [...subs, js]);
    this.changes.emitInvoiceEvent('invoice#sub_bill_added', invoice, { total: 1 });
    this.changes.syncLoadsOf(js, invoice, this.actor, now);
    return true;
  }

  /**
   * Unpaid single-load invoices of one customer combined into one invoice: the combined invoice
   * is new (billed now, listed only with `isShowCombinedInvoices`), the invoices it replaces are
   * voided (listed only with `isIncludeDeleted`), and `GET /invoices/<ref>` of each load returns it.
   */
  combine(): boolean {
    const first = this.pick((invoice, j) => this.combinable(invoice, j));
    if (first === undefined) return false;
    const callerOf = (j: number) => baseLoadAttrs(this.store.ctx, this.store.loadPositionOfInvoice(j)).callerId;
    const caller = callerOf(first);
    const parts = [first];
    const start = this.rng.int(Math.max(1, this.store.invoices.baseCount));
    // Partners of the same customer near a random spot: a bounded scan, the attributes are cheap.
    for (let n = 0; n < 3_000 && parts.length < 3; n++) {
      const j = (start + n) % Math.max(1, this.store.invoices.size);
      if (parts.includes(j) || callerOf(j) !== caller) continue;
      const invoice = this.store.invoices.get(j);
      if (invoice && this.combinable(invoice, j)) parts.push(j);
    }
    if (parts.length < 2) return false;
    const now = this.store.clock.iso();
    const jc = this.store.invoices.allocate();
    const records = parts.map((j) => this.store.invoices.get(j) as Rec);
    const entries = records.flatMap((r) => (r['invoice'] as Rec[]) ?? []);
    const loads = parts.map((j) => this.store.loadPositionOfInvoice(j));
    const template = buildInvoice(this.store.ctx, jc, this.store.loads.get(loads[0]!) ?? {}, now, 1, 'BILLING');
    const combined = withAmounts({ ...template, invoice: entries.map((e) => ({ ...e, billingDate: now })) }, 'BILLING', 0);
    this.store.invoices.put(jc, combined);
    this.store.loadsOfCombined.set(jc, loads);
    for (const [i, j] of parts.entries()) {
      this.store.invoices.put(j, { ...records[i]!, isDeleted: true, updatedAt: now });
      this.store.invoiceOfLoad.set(loads[i]!, jc);
    }
    this.store.loadOfInvoice.set(jc, loads[0]!);
    this.changes.emitInvoiceEvent('invoice#created', combined, { status: 'BILLING' });
    this.changes.syncLoadsOf(jc, combined, this.actor, now);
    return true;
  }

  private combinable(invoice: Rec, j: number): boolean {
    return (
      invoice['isDeleted'] !== true &&
      invoice['status'] === 'BILLING' &&
      Number(invoice['total']) === 1 &&
      !this.store.subCustomerInvoiceIds.has(String(invoice['_id'])) &&
      this.store.loadPositionsOfInvoice(j).length === 1 &&
      this.store.loads.get(this.store.loadPositionOfInvoice(j))?.['isDeleted'] !== true &&
      // Only the load's current invoice (not one a rebilling replaced).
      this.store.invoicePositionOfLoad(this.store.loadPositionOfInvoice(j)) === j
    );
  }

  /** An invoice voided: isDeleted (listed only with `isIncludeDeleted`); a primary one sends its loads back to COMPLETED, to be billed anew. */
  void(): boolean {
    const j = this.pick((invoice) => invoice['status'] !== 'FULL_PAID');
    if (j === undefined) return false;
    const invoice = this.store.invoices.get(j) as Rec;
    const now = this.store.clock.iso();
    this.store.invoices.put(j, { ...invoice, isDeleted: true, updatedAt: now });
    const sub = this.store.subCustomerInvoiceIds.has(String(invoice['_id']));
    for (const p of this.store.loadPositionsOfInvoice(j)) {
      if (!this.store.loads.exists(p)) continue;
      this.changes.updateLoad(p, sub ? {} : { status: 'COMPLETED', paidAmount: 0, isPaymentCompleted: false }, this.actor, now);
    }
    return true;
  }
}
