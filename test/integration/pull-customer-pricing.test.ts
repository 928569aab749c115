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

/** Both sinks against the truth: the same keys, tombstones exactly for the removed entries, the same amounts. */
async function expectSinksEqualTruth(s: SimulatorHandle, dir: string, prefix: string): Promise<void> {
  for (const stream of STREAMS) {
    const truth = await collectTruth(s, stream);
    const expectedOps = new Map(truth.map((r) => [String(r._id), r.isDeleted === true ? 'delete' : 'upsert']));
    const expectedAmounts = new Map(truth.filter((r) => r.isDeleted !== true).map((r) => [String(r._id), AMOUNTS[stream].truth(r)]));

    const csv = latestByKey(readCsvRows(path.join(dir, 'out'), TABLES[stream]));
    expect(new Map([...csv].map(([k, row]) => [k, row._op])), `${stream} csv`).toEqual(expectedOps);

    const table = target.table(`${prefix}${TABLES[stream]}`);
    const rows = (await target.reader.selectFrom(table).select(['record_key', '_op', '_deleted']).execute()) as Array<{ record_key: string; _op: string; _deleted: number }>;
    expect(new Map(rows.map((r) => [r.record_key, r._op])), `${stream} sql`).toEqual(expectedOps);
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

describe.each(['main', 'brokerage'] as const)('customer pricing streams on %s', (variant) => {
  it('equal the truth in CSV and SQLite; unchanged lists deliver nothing; edits and removals arrive', async () => {
    sim = await startSim({ variant, loads: 20, seed: variant === 'main' ? 31 : 32 });
    const dir = tempDir(`pricing-${variant}`);
    const prefix = `${variant}_`;
    const raw = pullConfigRaw({ sim, dir, streams: [...STREAMS] }) as { sync: { streams: Record<string, unknown> }; connectors: Record<string, unknown> };
    raw.connectors.erp = { type: 'sql', options: { ...target.options, tablePrefix: prefix } };
    raw.sync.streams = Object.fromEntries(STREAMS.map((s) => [s, { enabled: true, sinks: ['out', 'erp'] }]));
    // Brokerage pages customer rates up to 100 (spec §8); main at most 50, the default.
    if (variant === 'brokerage') raw.sync.streams.customerRates = { enabled: true, sinks: ['out', 'erp'], pageSize: 100 };
    const config = parseConfig(raw, { source: 'test config', baseDir: dir });
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
    // A removal seen through offset pages is believed only once a second read agrees.
    expect(edited.customerRates.pages).toBe(2 * ratePages);
    await expectSinksEqualTruth(sim, dir, prefix);

    // Tombstones already delivered are not delivered again, and cost no confirming read.
    const after = await sync(config, dir);
    for (const stream of STREAMS) expect(after[stream].delivered, stream).toBe(0);
    expect(after.customerRates.pages).toBe(ratePages);
  });
});
