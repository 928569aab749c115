import { AuditLog } from './audits.js';
import type { ServerClock } from './clock.js';
import { Collection, type Rec } from './collection.js';
import { type DatasetContext, msOf } from './dataset/context.js';
import { generateBill, billId } from './dataset/bills.js';
import { customerId, generateCustomer, type CustomerKind } from './dataset/customers.js';
import { generateBaseInvoice, invoiceId, summarizeInvoice, type InvoiceSummary } from './dataset/invoices.js';
import {
  billedCount,
  generateLoad,
  invoicePositionOfLoad,
  loadId,
  loadOfInvoicePosition,
  positionOfReference,
  summarizeLoad,
  type Load,
  type LoadSummary,
} from './dataset/loads.js';
import { generateSupportMove, supportMoveId } from './dataset/support-moves.js';
import { EventLog } from './events.js';
import { COLLECTION_CODES, parseId } from './ids.js';
import type { SimulatorOptions } from './options.js';
import { PricingBook } from './pricing-book.js';
import { Timeline } from './timeline.js';

/**
 * The simulated account: one collection per resource (lazy base + overlay), the audit logs and the
 * webhook event log. Reads only; every write goes through `changes.ts` so that each one bumps
 * updatedAt and emits its event.
 */
export class SimStore {
  readonly ctx: DatasetContext;
  readonly loads: Collection<Load, LoadSummary>;
  readonly customers: Collection<Rec>;
  readonly consignees: Collection<Rec>;
  readonly invoices: Collection<Rec, InvoiceSummary>;
  readonly bills: Collection<Rec>;
  readonly supportMoves: Collection<Rec>;
  readonly loadAudits: AuditLog;
  readonly customerAudits: AuditLog;
  readonly events: EventLog;
  /** Customer discounts, rates and dynamic rates (small, stored whole). */
  readonly pricing: PricingBook;
  /** Invoices created after start (load position → invoice position). */
  readonly invoiceOfLoad = new Map<number, number>();
  /** Load position of every invoice created after start. */
  readonly loadOfInvoice = new Map<number, number>();
  /** Every load of a combined invoice (created after start; a single load is in `loadOfInvoice`). */
  readonly loadsOfCombined = new Map<number, number[]>();
  /** Ids of sub-customer invoices: listed only with `isSubCustomer=true` (spec §4.2). */
  readonly subCustomerInvoiceIds = new Set<string>();
  /** Sub-customer invoice positions per load position. */
  readonly subInvoicesOfLoad = new Map<number, number[]>();

  constructor(options: SimulatorOptions, readonly clock: ServerClock) {
    const startMs = Date.parse(options.dataStart);
    const endMs = Math.max(startMs, clock.nowMs() - 60_000);
    const seed = options.seed;
    const t = (count: number, salt: number) => new Timeline(count, seed ^ salt, startMs, endMs);
    this.ctx = {
      variant: options.variant,
      seed,
      counts: { loads: options.loads, customers: options.customers, consignees: options.consignees, bills: options.bills, supportMoves: options.supportMoves },
      timelines: { loads: t(options.loads, 1), customers: t(options.customers, 2), consignees: t(options.consignees, 3), bills: t(options.bills, 4), supportMoves: t(options.supportMoves, 5) },
    };
    const ctx = this.ctx;
    const tl = ctx.timelines;
    const recordKey = (record: Rec, field: string) => msOf(record, field);
    const customerCollection = (kind: CustomerKind) =>
      new Collection<Rec>({
        name: kind,
        baseCount: ctx.counts[kind],
        id: (p) => customerId(ctx, kind, p),
        generate: (p) => generateCustomer(ctx, kind, p),
        // Every load embeds three customer records; regenerating them dominated page time.
        cacheGenerated: 20_000,
        baseKeys: { createdAt: (p) => tl[kind].createdAtMs(p), updatedAt: (p) => tl[kind].updatedAtMs(p) },
        recordKey,
      });
    this.customers = customerCollection('customers');
    this.consignees = customerCollection('consignees');
    // Base loads embed the customers as generated, never as later changed: a generated record must
    // be a pure function of its position, or its content would change without an updatedAt bump.
    const lookup = (kind: CustomerKind, p: number) => (kind === 'customers' ? this.customers : this.consignees).generated(p);
    this.loads = new Collection<Load, LoadSummary>({
      name: 'loads',
      compact: { summarize: summarizeLoad },
      baseCount: options.loads,
      id: (p) => loadId(ctx, p),
      generate: (p) => generateLoad(ctx, lookup, p),
      baseKeys: { createdAt: (p) => tl.loads.createdAtMs(p), updatedAt: (p) => tl.loads.updatedAtMs(p) },
      recordKey,
    });
    const baseLoad = (p: number) => generateLoad(ctx, lookup, p);
    this.invoices = new Collection<Rec, InvoiceSummary>({
      name: 'invoices',
      compact: { summarize: summarizeInvoice },
      baseCount: billedCount(options.loads),
      id: (j) => invoiceId(ctx, j),
      generate: (j) => generateBaseInvoice(ctx, j, baseLoad),
      baseKeys: { billingDate: (j) => tl.loads.updatedAtMs(loadOfInvoicePosition(j)) },
      recordKey,
    });
    this.bills = new Collection<Rec>({
      name: 'bills',
      baseCount: options.variant === 'main' ? options.bills : 0,
      id: (p) => billId(ctx, p),
      generate: (p) => generateBill(ctx, p),
      baseKeys: { createdAt: (p) => tl.bills.createdAtMs(p), updatedAt: (p) => tl.bills.updatedAtMs(p) },
      recordKey,
    });
    this.supportMoves = new Collection<Rec>({
      name: 'supportMoves',
      baseCount: options.variant === 'main' ? options.supportMoves : 0,
      id: (p) => supportMoveId(ctx, p),
      generate: (p) => generateSupportMove(ctx, p),
      baseKeys: { createdAt: (p) => tl.supportMoves.createdAtMs(p), updatedAt: (p) => tl.supportMoves.updatedAtMs(p) },
      recordKey,
    });
    this.loadAudits = new AuditLog(seed, 1);
    this.customerAudits = new AuditLog(seed, 2);
    this.events = new EventLog(clock);
    this.pricing = new PricingBook(ctx, clock, startMs);
  }

  loadPositionByRef(ref: string): number | undefined {
    const p = positionOfReference(this.ctx, ref);
    return p !== undefined && this.loads.exists(p) ? p : undefined;
  }

  loadPositionById(id: string): number | undefined {
    const p = parseId(COLLECTION_CODES.loads, this.ctx.seed, id);
    return p !== undefined && this.loads.exists(p) ? p : undefined;
  }

  customerPositionById(kind: CustomerKind, id: string): number | undefined {
    const code = kind === 'customers' ? COLLECTION_CODES.customers : COLLECTION_CODES.consignees;
    const p = parseId(code, this.ctx.seed, id);
    const collection = kind === 'customers' ? this.customers : this.consignees;
    return p !== undefined && collection.exists(p) ? p : undefined;
  }

  /** The invoice `GET /invoices/<ref>` returns for a load: its primary (or combined) one, unless voided. */
  liveInvoicePositionOfLoad(p: number): number | undefined {
    const j = this.invoicePositionOfLoad(p);
    return j !== undefined && this.invoices.get(j)?.['isDeleted'] !== true ? j : undefined;
  }

  /** Every load an invoice covers (several for a combined invoice). */
  loadPositionsOfInvoice(j: number): number[] {
    return this.loadsOfCombined.get(j) ?? [this.loadPositionOfInvoice(j)];
  }

  /** Invoice position of a load, if the load has reached billing. */
  invoicePositionOfLoad(p: number): number | undefined {
    const created = this.invoiceOfLoad.get(p);
    if (created !== undefined) return created;
    if (p < this.loads.baseCount) return invoicePositionOfLoad(p);
    return undefined;
  }

  loadPositionOfInvoice(j: number): number {
    return this.loadOfInvoice.get(j) ?? loadOfInvoicePosition(j);
  }
}
