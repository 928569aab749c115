import type { ServerClock } from './clock.js';
import type { Rec } from './collection.js';
import { CHARGE_CODES } from './dataset/constants.js';
import { customerId, type CustomerKind } from './dataset/customers.js';
import type { DatasetContext } from './dataset/context.js';
import { COLLECTION_CODES, makeId } from './ids.js';
import { hashInt, type Prng } from './prng.js';

/**
 * The reference data the ERP prices with (spec §2.12, §4.7): customer discounts, customer rates and
 * the account's one dynamic-rates record with its rules. Small lists, so they are stored whole
 * (no lazy base): generated from the seed at start, then changed by the mutator or a test
 * (`add`, `change`, `remove` of one entry). The API has no events and no audit for them, so writes
 * stay here instead of going through `changes.ts`. A removed entry is kept aside so `truth` can
 * list it as deleted (the sync must have delivered a tombstone for it).
 */
export const PRICING_LISTS = ['discounts', 'rates', 'dynamicRules'] as const;
export type PricingList = (typeof PRICING_LISTS)[number];
export const PRICING_ACTIONS = ['add', 'change', 'remove'] as const;
export type PricingAction = (typeof PRICING_ACTIONS)[number];

/** Base sizes: rates span several pages (50 on main, 100 on brokerage) so paging is exercised. */
const BASE_COUNTS: Readonly<Record<PricingList, number>> = { discounts: 8, rates: 120, dynamicRules: 6 };
/** Id ranges inside the `misc` collection code, one per list (positions grow with each add). */
const ID_BASE: Readonly<Record<PricingList, number>> = { discounts: 10_000_000, rates: 10_100_000, dynamicRules: 11_000_001 };
const DYNAMIC_RATES_POSITION = 11_000_000;
const CARRIER_POSITION = 1;

const DISCOUNT_KINDS = [
  ['percentage', 'Volume'],
  ['fixed', 'Loyalty'],
  ['percentage', 'Fuel rebate'],
] as const;
const RULE_FIELDS = [
  ['weight', 'LARGER_EQUAL', 44000],
  ['containerSize', 'ANY_IN', ["45'"]],
  ['hazmat', 'ANY_IN', [true]],
  ['distance', 'LARGER_EQUAL', 150],
] as const;

/** A decimal string with exactly `scale` digits from an integer amount of the smallest unit. */
function decimalText(units: number, scale: number): string {
  const negative = units < 0;
  const digits = String(Math.abs(units)).padStart(scale + 1, '0');
  const text = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${text}` : text;
}

export class PricingBook {
  private readonly live: Record<PricingList, Rec[]> = { discounts: [], rates: [], dynamicRules: [] };
  private readonly removed: Record<PricingList, Rec[]> = { discounts: [], rates: [], dynamicRules: [] };
  private readonly created: Record<PricingList, number> = { discounts: 0, rates: 0, dynamicRules: 0 };
  private readonly dynamicHeader: Rec;
  /** Bumped on every edit, so one change gives every changed entry a distinct content. */
  private edits = 0;

  constructor(
    private readonly ctx: DatasetContext,
    private readonly clock: ServerClock,
    startMs: number,
  ) {
    const at = new Date(startMs).toISOString();
    this.dynamicHeader = {
      _id: makeId(COLLECTION_CODES.misc, ctx.seed, DYNAMIC_RATES_POSITION),
      carrier: this.carrier(),
      createdAt: at,
      updatedAt: at,
    };
    for (const list of PRICING_LISTS) {
      for (let i = 0; i < BASE_COUNTS[list]; i++) this.live[list].push(this.generate(list, at));
    }
  }

  discounts(): Rec[] {
    return this.live.discounts.map(copy);
  }

  rates(): Rec[] {
    return this.live.rates.map(copy);
  }

  /** `GET /customer-dynamic-rates` `data`: the header with its current rules. */
  dynamicRates(): Rec {
    return { ...copy(this.dynamicHeader), rules: this.live.dynamicRules.map(copy) };
  }

  /** Every entry ever listed: the live ones, then the removed ones marked `isDeleted: true`. */
  truth(list: PricingList): Rec[] {
    return [...this.live[list].map(copy), ...this.removed[list].map((r) => ({ ...copy(r), isDeleted: true }))];
  }

  /**
   * One edit of one list; returns the `_id` of the entry added, changed or removed (undefined when
   * the list is empty and nothing could be changed or removed). `pick` chooses the entry.
   */
  apply(list: PricingList, action: PricingAction, pick: (size: number) => number): string | undefined {
    const now = this.clock.iso();
    this.edits++;
    const entries = this.live[list];
    let id: string | undefined;
    if (action === 'add') {
      const record = this.generate(list, now);
      entries.push(record);
      id = String(record['_id']);
    } else {
      if (entries.length === 0) return undefined;
      const at = pick(entries.length) % entries.length;
      const entry = entries[at] as Rec;
      id = String(entry['_id']);
      if (action === 'remove') {
        entries.splice(at, 1);
        this.removed[list].push(entry);
      } else {
        entries[at] = this.changed(list, entry, now);
      }
    }
    // The header of the dynamic rates changes with any of its rules.
    if (list === 'dynamicRules') this.dynamicHeader['updatedAt'] = now;
    return id;
  }

  /** A mutator step: a random list, mostly changes, some adds and removes. */
  step(rng: Prng): void {
    const list = rng.pick(PRICING_LISTS);
    const r = rng.next();
    const action: PricingAction = r < 0.6 ? 'change' : r < 0.8 ? 'add' : 'remove';
    this.apply(list, action, (size) => rng.int(size));
  }

  private carrier(): string {
    return makeId(COLLECTION_CODES.misc, this.ctx.seed, CARRIER_POSITION);
  }

  private party(kind: CustomerKind, n: number): string[] {
    return [customerId(this.ctx, kind, n % Math.max(1, this.ctx.counts[kind]))];
  }

  private generate(list: PricingList, at: string): Rec {
    const n = this.created[list]++;
    const seed = this.ctx.seed;
    const _id = makeId(COLLECTION_CODES.misc, seed, ID_BASE[list] + n);
    const h = hashInt(seed, n, list.length);
    if (list === 'dynamicRules') {
      const [field, operator, value] = RULE_FIELDS[h % RULE_FIELDS.length]!;
      return {
        _id,
        name: `Rule ${n + 1}`,
        type: 'fixed',
        query: [{ type: 'GROUP', value: 'AND', isNegated: false, children: [{ field, operator, value }] }],
        index: n,
        amount: 50 + (h % 40) * 5,
        freeDays: h % 3,
        minimumAmount: (h % 2) * 25,
        isManual: h % 5 === 0,
        terminals: [],
      };
    }
    const common = {
      _id,
      createdAt: at,
      updatedAt: at,
      caller: this.party('customers', n),
      carrier: this.carrier(),
      terminals: [],
      consignee: n % 3 === 0 ? this.party('consignees', n) : [],
      shipper: [],
    };
    if (list === 'discounts') {
      const [type, name] = DISCOUNT_KINDS[h % DISCOUNT_KINDS.length]!;
      // Percentages with a fraction, fixed amounts in cents: exact decimals the ERP must keep.
      return { ...common, discounts: [{ type, name, discounts: type === 'fixed' ? decimalText(500 + (h % 900), 2) : decimalText(25 + (h % 200), 2) }] };
    }
    const [chargeName, chargeCode] = CHARGE_CODES[h % CHARGE_CODES.length]!;
    const amount = decimalText(15_000 + (h % 40_000), 2);
    return {
      ...common,
      pricing: [
        { name: 'Base Price', chargeCode: 'BASE_PRICE', perType: 'fixed', freeDays: 0, unit: '1.00', amount, finalAmount: amount, chargePerDay: 0, chargePerMinute: 0, glCode: '4000' },
        { name: chargeName, chargeCode, perType: 'perday', freeDays: 1 + (h % 4), unit: decimalText(1 + (h % 3), 2), amount: decimalText(7_500 + (h % 5_000), 2), chargePerDay: (h % 9) + 0.25, chargePerMinute: 0, glCode: '4100' },
      ],
    };
  }

  private changed(list: PricingList, entry: Rec, now: string): Rec {
    const n = this.edits;
    if (list === 'dynamicRules') return { ...entry, amount: Number(entry['amount']) + 5, minimumAmount: n % 50 };
    const next: Rec = { ...copy(entry), updatedAt: now };
    if (list === 'discounts') {
      const lines = (next['discounts'] as Rec[]).map((line, i) => (i === 0 ? { ...line, discounts: decimalText(100 + (n % 900), 2) } : line));
      next['discounts'] = lines;
    } else {
      const lines = (next['pricing'] as Rec[]).map((line, i) => {
        if (i !== 0) return line;
        const amount = decimalText(20_000 + ((n * 37) % 30_000), 2);
        return { ...line, amount, finalAmount: amount };
      });
      next['pricing'] = lines;
    }
    return next;
  }
}

function copy(record: Rec): Rec {
  return structuredClone(record);
}
