import { describe, expect, it } from 'vitest';
import { benchStreamPasses, type StreamPassRow } from '../../bench/stream-passes.js';

/**
 * Every polled stream's incremental pass against the simulator (issue 14, deliverable 6), both
 * variants, product defaults, the mutator on over 5-minute intervals of server time — the
 * `--only=passes` benchmark at a small size. Counts, not times: each stream's requests (counted by
 * the simulator) stay within the floor its settings allow — ceil((changes + what the lookback
 * reads again) / 50) + 1, from the simulator's truth — and within the minimum itself where a
 * stream has no lookback (append-only logs, whole reference lists). On main, once nothing changed
 * for longer than the lookback the floor is one request; brokerage day windows read the current
 * UTC day whole, so their floor is that day's records. Invoices are left to their own tests.
 */
const NO_LOOKBACK = new Set(['webhookEvents', 'loadAudits', 'customerAudits', 'chargeCodes', 'loadDocumentTypes', 'customerDiscounts', 'customerRates', 'customerDynamicRates']);

function overBudget(rows: StreamPassRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    if (r.stream === 'invoices') continue;
    const budget = NO_LOOKBACK.has(r.stream) ? r.minimum : r.floor;
    if (r.requests > budget) out.push(`${r.variant} ${r.pass} ${r.stream}: ${r.requests} requests > ${budget} (changes ${r.changes}, lookback re-read ${r.reread})`);
  }
  return out;
}

describe.each(['main', 'brokerage'] as const)('pull: steady-state request cost of every stream (%s)', (variant) => {
  it('each incremental pass stays within the floor its settings allow', async () => {
    const rows = await benchStreamPasses({ variant, loads: 2_000, stepsPerInterval: 60, seed: 45 });
    for (const r of rows) if (r.requests > 1) console.info(`[${variant}] ${r.pass} ${r.stream}: ${r.requests} requests, changes ${r.changes}, re-read ${r.reread}, minimum ${r.minimum}, floor ${r.floor}`);
    // The scenario must be busy enough that a wasted page shows.
    expect(rows.find((r) => r.pass === 'changes' && r.stream === 'loads')!.changes).toBeGreaterThan(80);
    expect(overBudget(rows)).toEqual([]);
  }, 300_000);
});
