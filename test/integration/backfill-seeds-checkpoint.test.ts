import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { InvoiceCursor } from '../../src/sync/strategies/invoice-cursor.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { StreamRunSummary } from '../../src/sync/stream-runner.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { ageChangesPastSafetyLag, pullConfigRaw, startSim, tempDir } from '../helpers/pull-harness.js';

/** Streams read by position (not whole lists): after a backfill to now, `sync` must re-read only the lookback. */
const POSITIONED = ['loads', 'invoices', 'bills', 'supportMoves', 'customers', 'consignees', 'webhookEvents', 'loadAudits', 'customerAudits'];
/** Read whole each run by design (a snapshot has no position to seed); they must still deliver nothing new. */
const SNAPSHOTS = ['chargeCodes', 'customerDiscounts'];

/**
 * Day one with a backfill (issue 13): `backfill --from <initialFrom> --to now` finishes, and the
 * `sync` (or `run`) after it starts where the backfill ended instead of reading the whole history
 * again — it reads the lookback and the changes, nothing more.
 */
describe('a finished backfill seeds the incremental checkpoints', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ variant: 'main', loads: 600, customers: 60, consignees: 40, bills: 80, supportMoves: 60 });
  });
  afterAll(async () => sim?.close());

  function deployment(name: string): string {
    const dir = tempDir(`backfill-seed-${name}`);
    const raw = pullConfigRaw({ sim, dir, streams: [...POSITIONED, ...SNAPSHOTS] }) as Record<string, any>;
    process.env.BACKFILL_SEED_SECRET = sim.options.clientSecret;
    raw.api.auth.clientSecret = '${BACKFILL_SEED_SECRET}';
    const file = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(file, stringify(raw));
    return file;
  }
  const summaries = async (args: string[]): Promise<Map<string, StreamRunSummary>> => {
    const result = await runCliInProcess([...args, '--json']);
    expect(result.code, result.stdout).toBe(0);
    return new Map((JSON.parse(result.stdout) as StreamRunSummary[]).map((s) => [s.stream, s]));
  };

  it('sync after `backfill --from initialFrom --to now` reads only the changes', async () => {
    // What a first sync costs without a backfill: the whole history.
    const fresh = await summaries(['sync', '-c', deployment('fresh')]);

    const config = deployment('backfilled');
    const backfill = await summaries(['backfill', '--from', sim.options.dataStart, '--to', 'now', '-c', config]);
    for (const stream of POSITIONED) {
      // Invoices the listings omit are found only by the first sync's loads change feed (below).
      if (stream === 'invoices') expect(backfill.get(stream)!.delivered).toBeLessThanOrEqual(fresh.get(stream)!.delivered);
      else expect(backfill.get(stream)!.delivered, stream).toBe(fresh.get(stream)!.delivered);
    }
    expect(backfill.get('loads')!.delivered).toBe(600);

    // The seeded invoices checkpoint moves both listings (a missing sub-customer position would re-read them all from initialFrom).
    const db = new Database(path.join(path.dirname(config), 'state.sqlite'), { readonly: true });
    const seeded = JSON.parse((db.prepare("select cursor from checkpoints where stream = 'invoices'").get() as { cursor: string }).cursor) as InvoiceCursor;
    db.close();
    expect(seeded.billing.highWater).not.toBeNull();
    expect(seeded.subBilling?.highWater).toBe(seeded.billing.highWater);

    // Two loads change after the backfill; nothing else does.
    await sim.mutate(2);
    ageChangesPastSafetyLag(sim);
    const after = await summaries(['sync', '-c', config]);
    for (const stream of POSITIONED) {
      const s = after.get(stream)!;
      const full = fresh.get(stream)!;
      // Not the history again: fewer requests than a first sync, and (but for invoices) a small
      // part of its records — the lookback and the changes.
      if (full.requests > 2) expect(s.requests, `${stream}: ${s.requests} requests (first sync: ${full.requests})`).toBeLessThan(full.requests);
      if (stream !== 'invoices' && full.delivered > 0) expect(s.unchanged + s.delivered, `${stream} read ${s.unchanged + s.delivered} of ${full.delivered}`).toBeLessThan(full.delivered / 4 + 5);
    }
    const changed = POSITIONED.filter((s) => s !== 'invoices').reduce((n, s) => n + after.get(s)!.delivered, 0);
    expect(changed).toBeGreaterThan(0);
    expect(changed).toBeLessThan(12);
    for (const stream of SNAPSHOTS) expect(after.get(stream)!.delivered, stream).toBe(0);
    // The invoices stream reads the loads change feed once (its cursor is not seeded): it finds
    // the invoices no listing showed, so none is missed and none is delivered twice.
    const invoices = backfill.get('invoices')!.delivered + after.get('invoices')!.delivered;
    expect(invoices).toBeGreaterThanOrEqual(fresh.get('invoices')!.delivered);
    expect(invoices).toBeLessThanOrEqual(fresh.get('invoices')!.delivered + 4);
  }, 120_000);

  it('a backfill that starts after initialFrom does not seed: the first sync still reads from initialFrom', async () => {
    const config = deployment('partial');
    const late = new Date(Date.parse(sim.options.dataStart) + 86_400_000 * 10).toISOString();
    await summaries(['backfill', '--from', late, '--to', 'now', '--stream', 'loads', '-c', config]);
    const after = await summaries(['sync', '--stream', 'loads', '-c', config]);
    const loads = after.get('loads')!;
    // Every load is read again; those updated before `late` are delivered for the first time.
    expect(loads.unchanged + loads.delivered).toBeGreaterThanOrEqual(600);
    expect(loads.delivered).toBeGreaterThan(0);
  }, 120_000);
});
