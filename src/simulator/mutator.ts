import { MILESTONES, TENDER_STATUSES, type Milestone } from './brokerage-events.js';
import { MUTATOR_ACTOR, type Changes } from './changes.js';
import { BILL_STATUSES, LOAD_FLOW } from './dataset/constants.js';
import type { Load } from './dataset/loads.js';
import { InvoiceLifecycle } from './invoice-lifecycle.js';
import { Prng } from './prng.js';
import type { SimStore } from './store.js';

/**
 * Changes the account while clients page, deterministically from the seed. It deliberately hits
 * old records (pages a backfill already read), whole groups of records with tied timestamps (so
 * several share the new updatedAt to the millisecond) and recent records (pages not read yet).
 */
export class Mutator {
  private readonly rng: Prng;
  private timer: NodeJS.Timeout | null = null;
  private readonly invoiceLifecycle: InvoiceLifecycle;
  /** Reference-data edits draw from their own stream, so the other steps' draws stay as they were. */
  private readonly pricingRng: Prng;
  /** Brokerage-only changes draw from their own stream, so every other draw stays as it was. */
  private readonly brokerageRng: Prng;
  steps = 0;

  /** `lifecycle`: also rebill, sub-customer, combine and void invoices (option `invoiceLifecycle`, read live). */
  constructor(
    seed: number,
    private readonly store: SimStore,
    private readonly changes: Changes,
    private readonly lifecycle: () => boolean = () => false,
    /** Share of load updates stamped late, and how late at most (option `mutator.lateWrites`, read live). */
    private readonly lateWrites: () => { share: number; maxLateMs: number } | undefined = () => undefined,
    private readonly onLateWrite: () => void = () => undefined,
  ) {
    this.rng = new Prng(seed ^ 0x6d75);
    // Its own random stream: switching the lifecycle on leaves every other step's draws alone.
    this.invoiceLifecycle = new InvoiceLifecycle(store, changes, new Prng(seed ^ 0x1f0c), MUTATOR_ACTOR);
    this.pricingRng = new Prng(seed ^ 0x7072);
    this.brokerageRng = new Prng(seed ^ 0x0b4e);
    this.lateRng = new Prng(seed ^ 0x1a7e);
  }

  /** Late stamps draw from their own stream, so every other draw stays as it was. */
  private readonly lateRng: Prng;

  /**
   * The updatedAt a load update carries: now, or — for the share of updates that become visible
   * late — up to `maxLateMs` earlier, but never before the load's current updatedAt (a write does
   * not move a record back in time).
   */
  private loadStamp(now: string, load: Load): string {
    const late = this.lateWrites();
    if (!late || late.share <= 0 || !this.lateRng.chance(late.share)) return now;
    const previous = Date.parse(String(load['updatedAt'] ?? ''));
    const earlier = Date.parse(now) - 1 - this.lateRng.int(late.maxLateMs);
    const stamp = Number.isNaN(previous) ? earlier : Math.max(earlier, previous + 1);
    this.onLateWrite();
    return new Date(Math.min(stamp, Date.parse(now))).toISOString();
  }

  start(intervalMs: number, perTick: number): void {
    this.stop();
    this.timer = setInterval(() => this.run(perTick), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  run(count: number): void {
    for (let i = 0; i < count; i++) this.step();
  }

  private step(): void {
    this.steps++;
    const r = this.rng.next();
    if (r < 0.3) this.updateLoads();
    else if (r < 0.4) this.createLoad();
    else if (r < 0.45) this.deleteLoad();
    else if (r < 0.63) this.advanceStatus();
    else if (r < 0.78) {
      // With the lifecycle on, a third of the invoice steps change invoices after billing instead.
      if (!(this.lifecycle() && r >= 0.73 && this.invoiceLifecycle.step())) this.payInvoice();
    }
    else if (r < 0.84) this.updateSimple('bills');
    else if (r < 0.9) this.updateSimple('supportMoves');
    else if (r < 0.95) this.updateCustomer('customers');
    else this.updateCustomer('consignees');
    // Every tenth step also edits a discount, rate or dynamic rule (add, change or remove):
    // reference data changes far less often than loads.
    if (this.steps % 10 === 0) this.store.pricing.step(this.pricingRng);
  }

  /** A live (not deleted) load position, biased three ways: any, oldest tenth, newest tenth. */
  private pickLoad(): number | undefined {
    const loads = this.store.loads;
    if (loads.size === 0) return undefined;
    for (let attempt = 0; attempt < 8; attempt++) {
      const mode = this.rng.int(3);
      const tenth = Math.max(1, Math.floor(loads.size / 10));
      const p = mode === 0 ? this.rng.int(loads.size) : mode === 1 ? this.rng.int(tenth) : loads.size - 1 - this.rng.int(tenth);
      const load = loads.get(p);
      if (load && load['isDeleted'] !== true) return p;
    }
    return undefined;
  }

  private updateLoads(): void {
    const now = this.store.clock.iso();
    const loads = this.store.loads;
    const p = this.pickLoad();
    if (p === undefined) return;
    let targets = [p];
    if (this.rng.chance(0.3) && p < loads.baseCount) {
      // The whole tie group at once: they keep sharing a timestamp, now a new one.
      const timeline = this.store.ctx.timelines.loads;
      const [a, b] = timeline.groupRange(timeline.groupOf(p));
      targets = [];
      for (let q = a; q < b; q++) if (loads.get(q)?.['isDeleted'] !== true) targets.push(q);
    }
    const kind = this.rng.int(6);
    for (const q of targets) {
      const load = loads.get(q) as Load;
      const n = this.steps;
      const change: Record<string, unknown> =
        kind === 0 ? { officeNote: `note ${n}` }
        : kind === 1 ? { lastFreeDay: new Date(Date.parse(String(load['lastFreeDay'])) + 86_400_000).toISOString() }
        : kind === 2 ? { containerSize: load['containerSize'] === "40'" ? "45'" : "40'" }
        : kind === 3 ? { sealNo: `SEAL${n}` }
        : kind === 4 ? { freight: load['freight'] === 'HOLD' ? 'RELEASED' : 'HOLD' }
        : { temperature: `${-20 + this.rng.int(40)}F`, pickupTimes: [{ ...(((load['pickupTimes'] as Load[]) ?? [])[0] ?? {}), pickupFromTime: now }] };
      const stamp = this.loadStamp(now, load);
      if (kind === 5 && this.store.ctx.variant === 'brokerage') this.brokerageChange(q, load, change, stamp);
      else this.changes.updateLoad(q, change, MUTATOR_ACTOR, stamp);
    }
  }

  /**
   * Brokerage: the appointment change above, or one that emits another brokerage-only event
   * (§6.3): consignee appointment, port return window, milestone, tender answer.
   */
  private brokerageChange(q: number, load: Load, pickupChange: Record<string, unknown>, now: string): void {
    const choice = this.brokerageRng.int(5);
    const day = 86_400_000;
    if (choice === 0) this.changes.updateLoad(q, pickupChange, MUTATOR_ACTOR, now);
    else if (choice === 1) this.changes.updateLoad(q, { deliveryTimes: [{ ...(((load['deliveryTimes'] as Load[]) ?? [])[0] ?? {}), deliveryFromTime: now }] }, MUTATOR_ACTOR, now);
    else if (choice === 2) this.changes.updateLoad(q, { returnFromTime: now, returnToTime: new Date(Date.parse(now) + day).toISOString() }, MUTATOR_ACTOR, now);
    else if (choice === 3) this.changes.recordMilestone(q, this.brokerageRng.pick(Object.keys(MILESTONES) as Milestone[]), MUTATOR_ACTOR, now);
    else this.changes.changeTender(q, this.brokerageRng.pick(TENDER_STATUSES), MUTATOR_ACTOR, now);
  }

  private createLoad(): void {
    // The generated template supplies caller, shipper and consignee.
    this.changes.createLoad({ type_of_load: this.rng.pick(['IMPORT', 'EXPORT', 'ROAD']), preSetOrderStatus: '' }, MUTATOR_ACTOR);
  }

  private deleteLoad(): void {
    const p = this.pickLoad();
    if (p !== undefined) this.changes.deleteLoad(p, MUTATOR_ACTOR);
  }

  private advanceStatus(): void {
    const p = this.pickLoad();
    if (p === undefined) return;
    const status = String(this.store.loads.get(p)?.['status']);
    const at = (LOAD_FLOW as readonly string[]).indexOf(status);
    let next: string;
    if (status === 'CUSTOMS HOLD' || status === 'FREIGHT HOLD') next = 'AVAILABLE';
    else if (at === LOAD_FLOW.length - 1) next = 'BILLING';
    else if (at >= 0) next = LOAD_FLOW[at + 1] as string;
    else return; // already billed: payments move it on
    this.changes.updateLoad(p, { status: next }, MUTATOR_ACTOR);
  }

  private payInvoice(): void {
    const invoices = this.store.invoices;
    if (invoices.size === 0) return;
    for (let attempt = 0; attempt < 8; attempt++) {
      // Half the time one of the invoices created since start, so new billing gets paid too.
      const created = invoices.size - invoices.baseCount;
      const j = created > 0 && this.rng.chance(0.5) ? invoices.baseCount + this.rng.int(created) : this.rng.int(invoices.size);
      const invoice = invoices.get(j);
      if (!invoice || invoice['status'] === 'FULL_PAID' || invoice['isDeleted'] === true) continue;
      this.changes.payInvoice(j, MUTATOR_ACTOR, this.rng.chance(0.5) ? 0.5 : 1);
      return;
    }
  }

  private updateSimple(name: 'bills' | 'supportMoves'): void {
    const collection = this.store[name];
    if (collection.size === 0) return;
    const p = this.rng.int(collection.size);
    if (name === 'bills') {
      this.changes.updateSimple('bills', p, { status: this.rng.pick(BILL_STATUSES), totalPaidAmount: this.rng.int(1000) });
    } else {
      this.changes.updateSimple('supportMoves', p, { totalDistance: 1 + this.rng.int(90) });
    }
  }

  private updateCustomer(kind: 'customers' | 'consignees'): void {
    const collection = kind === 'customers' ? this.store.customers : this.store.consignees;
    if (collection.size === 0) return;
    const p = this.rng.int(collection.size);
    if (!collection.exists(p)) return;
    this.changes.updateCustomer(kind, p, { mobile: `+1555${String(this.rng.int(10_000_000)).padStart(7, '0')}`, usageCount: this.rng.int(1000) }, MUTATOR_ACTOR);
  }
}
