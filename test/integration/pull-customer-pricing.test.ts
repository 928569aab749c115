import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse-config.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { StreamRunSummary } from '../../src/sync/stream-runner.js';
import { collectTruth, latestByKey, pullConfigRaw, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';
import { createTarget, type SqlTarget } from '../helpers/sql-targets.js';

/**
 * Reference data the ERP prices with (issue 15 item 8): customer discounts, rates and dynamic rate
 * rules as snapshot streams, on both variants, into a CSV drop and a SQLite database at once. The
 * sinks must equal the simulator's truth, an unchanged list must deliver nothing (content hash), a
 * changed entry must be delivered again, and a removed one must arrive as a tombstone.
 */
const STREAMS = ['customerDiscounts', 'customerRates', 'customerDynamicRates'] as const;
type PricingStream = (typeof STREAMS)[number];
const TABLES: Record<PricingStream, string> = {
  customerDiscounts: 'customer_discounts',
  customerRates: 'customer_rates',
  customerDynamicRates: 'customer_dynamic_rate_rules',
};
/** The exact value each stream's test compares, read from the truth and from the sinks' child tables. */
const AMOUNTS: Record<PricingStream, { table: string; column: string; line: 'line_no' | 'group_no' | null; truth: (r: Record<string, unknown>) => string }> = {
  customerDiscounts: { table: 'customer_discount_lines', column: 'discount', line: 'line_no', truth: (r) => fixed((r.discounts as Array<{ discounts: string }>)[0]!.discounts, 4) },
  customerRates: { table: 'customer_rate_pricing', column: 'amount', line: 'line_no', truth: (r) => fixed((r.pricing as Array<{ amount: string }>)[0]!.amount, 2) },
  customerDynamicRates: { table: 'customer_dynamic_rate_rules', column: 'amount', line: null, truth: (r) => fixed(String(r.amount), 2) },
};

function fixed(text: string, scale: number): string {
  const [whole, fraction = ''] = text.split('.');
  return `${whole}.${fraction.padEnd(scale, '0')}`;
}

let sim: SimulatorHandle | undefined;
let target: SqlTarget;
beforeAll(async () => {
  target = await createTarget('sqlite', 'sqlite', 'pricing');
});
afterAll(async () => {
  await target?.drop();
});
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const byStream = (summaries: StreamRunSummary[]) => Object.fromEntries(summaries.map((s) => [s.stream, s])) as Record<PricingStream, StreamRunSummary>;

async function sync(config: ReturnType<typeof parseConfig>, dir: string): Promise<Record<PricingStream, StreamRunSummary>> {
  const summaries = byStream(await syncOnce(config, dir));
  for (const stream of STREAMS) expect(summaries[stream].status, summaries[stream].error ?? '').toBe('ok');
  return summaries;
}

const counts = (summaries: Record<PricingStream, StreamRunSummary>) =>
  Object.fromEntries(STREAMS.map((s) => [s, { upserts: summaries[s].upserts, deletes: summaries[s].deletes, rejected: summaries[s].rejected }]));

/**
 * Both sinks against the truth: the same keys, tombstones exactly for the removed entries, the
 * same amounts. With `unseenRemovals`, an entry added and removed between two runs (never
 * delivered) may be absent; one that was delivered must still be tombstoned.
 */
async function expectSinksEqualTruth(s: SimulatorHandle, dir: string, prefix: string, options: { unseenRemovals?: boolean } = {}): Promise<void> {
  for (const stream of STREAMS) {
    const truth = await collectTruth(s, stream);
    const expectedAmounts = new Map(truth.filter((r) => r.isDeleted !== true).map((r) => [String(r._id), AMOUNTS[stream].truth(r)]));
    const expectedOps = (sink: ReadonlyMap<string, unknown>) =>
      new Map(
        truth
          .filter((r) => !(options.unseenRemovals && r.isDeleted === true && !sink.has(String(r._id))))
          .map((r) => [String(r._id), r.isDeleted === true ? 'delete' : 'upsert']),
      );

    const csv = new Map([...latestByKey(readCsvRows(path.join(dir, 'out'), TABLES[stream]))].map(([k, row]) => [k, row._op]));
    expect(csv, `${stream} csv`).toEqual(expectedOps(csv));

    const table = target.table(`${prefix}${TABLES[stream]}`);
    const rows = (await target.reader.selectFrom(table).select(['record_key', '_op', '_deleted']).execute()) as Array<{ record_key: string; _op: string; _deleted: number }>;
    const sql = new Map(rows.map((r) => [r.record_key, r._op]));
    expect(sql, `${stream} sql`).toEqual(expectedOps(sql));
    expect(rows.filter((r) => Boolean(Number(r._deleted)) !== (r._op === 'delete'))).toEqual([]);

    const amount = AMOUNTS[stream];
    let query = target.reader.selectFrom(target.table(`${prefix}${amount.table}`)).select(['record_key', amount.column]);
    if (amount.line) query = query.where(amount.line, '=', 0);
    const amountRows = (await query.execute()) as Array<Record<string, unknown>>;
    // A tombstone soft-deletes its row and removes its children: only live entries have lines.
    const liveAmounts = amount.line ? amountRows : amountRows.filter((r) => expectedAmounts.has(String(r.record_key)));
    expect(new Map(liveAmounts.map((r) => [String(r.record_key), String(r[amount.column])])), `${stream} amounts`).toEqual(expectedAmounts);
  }
}

function pricingConfig(s: SimulatorHandle, dir: string, prefix: string) {
  const variant = s.options.variant;
  const raw = pullConfigRaw({ sim: s, dir, streams: [...STREAMS] }) as { sync: { streams: Record<string, unknown> }; connectors: Record<string, unknown> };
  raw.connectors.erp = { type: 'sql', options: { ...target.options, tablePrefix: prefix } };
  raw.sync.streams = Object.fromEntries(STREAMS.map((stream) => [stream, { enabled: true, sinks: ['out', 'erp'] }]));
  // Brokerage pages customer rates up to 100 (spec §8); main at most 50, the default.
  if (variant === 'brokerage') raw.sync.streams.customerRates = { enabled: true, sinks: ['out', 'erp'], pageSize: 100 };
  return parseConfig(raw, { source: 'test config', baseDir: dir });
}

describe.each(['main', 'brokerage'] as const)('customer pricing streams on %s', (variant) => {
  it('equal the truth in CSV and SQLite; unchanged lists deliver nothing; edits and removals arrive', async () => {
    sim = await startSim({ variant, loads: 20, seed: variant === 'main' ? 31 : 32 });
    const dir = tempDir(`pricing-${variant}`);
    const prefix = `${variant}_`;
    const config = pricingConfig(sim, dir, prefix);
    const ratePages = variant === 'main' ? 3 : 2; // 120 rates, 50 or 100 a page

    const first = await sync(config, dir);
    expect(counts(first)).toEqual({
      customerDiscounts: { upserts: 8, deletes: 0, rejected: 0 },
      customerRates: { upserts: 120, deletes: 0, rejected: 0 },
      customerDynamicRates: { upserts: 6, deletes: 0, rejected: 0 },
    });
    expect(first.customerRates.pages).toBe(ratePages);
    await expectSinksEqualTruth(sim, dir, prefix);

    const unchanged = await sync(config, dir);
    for (const stream of STREAMS) expect(unchanged[stream].delivered, stream).toBe(0);

    sim.editPricing('rates', 'change', 70);
    sim.editPricing('rates', 'remove', 0);
    sim.editPricing('discounts', 'change', 1);
    sim.editPricing('discounts', 'remove', 3);
    sim.editPricing('discounts', 'add');
    sim.editPricing('dynamicRules', 'change', 2);
    sim.editPricing('dynamicRules', 'remove', 0);
    const edited = await sync(config, dir);
    expect(counts(edited)).toEqual({
      customerDiscounts: { upserts: 2, deletes: 1, rejected: 0 },
      customerRates: { upserts: 1, deletes: 1, rejected: 0 },
      customerDynamicRates: { upserts: 1, deletes: 1, rejected: 0 },
    });
    // The rate pages overlap by one entry and every overlap matched: the read proves no entry slid
    // past a page boundary, so the removal is believed without a second read (issue 14).
    expect(edited.customerRates.pages).toBe(ratePages);
    await expectSinksEqualTruth(sim, dir, prefix);

    // Tombstones already delivered are not delivered again, and cost no confirming read.
    const after = await sync(config, dir);
    for (const stream of STREAMS) expect(after[stream].delivered, stream).toBe(0);
    expect(after.customerRates.pages).toBe(ratePages);
  });
});

describe('customer pricing streams while the reference data changes', () => {
  it('lose nothing and invent no removal: after the edits stop, one more sync equals the truth', async () => {
    // A pricing edit every tenth mutator step: with 10 steps every 2 ms, an edit about every 2 ms,
    // so entries are added and removed while the rate pages are being read.
    sim = await startSim({ variant: 'main', loads: 20, seed: 33, mutator: { enabled: true, intervalMs: 2, perTick: 10 } });
    const dir = tempDir('pricing-mutating');
    const prefix = 'mut_';
    const config = pricingConfig(sim, dir, prefix);
    for (let pass = 0; pass < 4; pass++) await sync(config, dir);
    sim.configure({ mutator: { enabled: false, intervalMs: 2, perTick: 10 } });
    const removed = (await collectTruth(sim, 'customerRates')).filter((r) => r.isDeleted === true).length;
    await sync(config, dir);
    expect(removed).toBeGreaterThan(0);
    await expectSinksEqualTruth(sim, dir, prefix, { unseenRemovals: true });
    // The CSV drop keeps every delivery: no tombstone, not even one later undone, for an entry
    // that still exists (the simulator never re-adds an id).
    for (const stream of STREAMS) {
      const live = new Set((await collectTruth(sim, stream)).filter((r) => r.isDeleted !== true).map((r) => String(r._id)));
      const wrong = readCsvRows(path.join(dir, 'out'), TABLES[stream]).filter((row) => row._op === 'delete' && live.has(row.record_key!));
      expect(wrong.map((row) => row.record_key), stream).toEqual([]);
    }
  });
});
