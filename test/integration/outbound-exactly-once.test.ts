import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { csvKey, insertStagingCreates, readStaging, sqlKey, writeCreatesCsv } from '../helpers/outbound-fixtures.js';
import { loadsByErpKey, outboundConfig, push, syncDirectory, withApp } from '../helpers/outbound-harness.js';
import { parse } from 'csv-parse/sync';
import { collectTruth, startSim, tempDir } from '../helpers/pull-harness.js';
import { parseEvent } from '../../src/webhooks/webhook-event.js';

/** Creates per source: fewer on brokerage to keep the suite's runtime reasonable. */
const SIZES = { main: 1_000, brokerage: 500 } as const;

/** The statuses each load went through, in order, from the simulator's event log (both variants emit them). */
async function statusHistory(sim: SimulatorHandle): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const record of await collectTruth(sim, 'webhookEvents')) {
    if (record['eventType'] !== 'load#status_updated') continue;
    const event = parseEvent(JSON.stringify(record['data']));
    const status = String((event.payload['changedValues'] as { status: string }).status).toUpperCase();
    out.set(event.referenceNumber!, [...(out.get(event.referenceNumber!) ?? []), status]);
  }
  return out;
}

/**
 * The acceptance test of the outbound side: 1,000 creates from a CSV inbox plus 1,000 from a SQL
 * staging table, against a simulator that answers 20 % of creates ambiguously (load created, then
 * a 502 or a dropped socket) and 10 % of all requests with other faults. Exactly 2,000 loads must
 * exist afterwards, each once, and every write-back must carry its own load's reference number.
 * Brokerage: 500 + 500, against the strict simulator (multipart bodies only, §5.2).
 */
describe.each(['main', 'brokerage'] as const)('outbound exactly-once under ambiguous creates and faults, %s', (variant) => {
  const N = SIZES[variant];
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({
      variant,
      strictEncoding: variant === 'brokerage',
      loads: 500,
      customers: 20,
      consignees: 10,
      ambiguousCreateRate: 0.2,
      faults: { rate: 0.1, kinds: ['500', '502', '503', 'html', 'drop', 'truncated', 'slow'], slowMs: 200 },
    });
  });
  afterAll(async () => sim.close());

  it(`creates exactly ${2 * N} loads from an inbox file and a staging table, statuses in order, results written back`, async () => {
    const dir = tempDir(`outbound-once-${variant}`);
    const erpDb = path.join(dir, 'erp.sqlite');
    const config = outboundConfig({
      sim,
      dir,
      connectors: {
        erp_inbox: { type: 'inbox', options: { dir: 'inbox' } },
        erp_sql: { type: 'sql', options: { dialect: 'sqlite', filename: 'erp.sqlite', staging: { claimBatch: 5000 } } },
      },
      outbound: { sources: ['erp_inbox', 'erp_sql'], concurrency: 8 },
    });
    await syncDirectory(config, dir); // also creates the inbox folders and the staging table
    writeCreatesCsv(path.join(dir, 'inbox', 'orders.csv'), N, csvKey, variant);
    insertStagingCreates(erpDb, N, undefined, variant);

    const summary = await push(config, dir);
    expect(summary.sourceErrors).toEqual([]);
    expect(summary.invalid).toBe(0);
    expect(summary.dead).toBe(0);
    expect(summary.waiting).toBe(0);
    expect(summary.reconciled).toBeGreaterThan(N / 10);
    expect(sim.stats().ambiguousCreates).toBeGreaterThan(N / 5);

    // The simulator's truth: every ERP key exactly once.
    const keys = [...Array.from({ length: N }, (_, i) => csvKey(i + 1)), ...Array.from({ length: N }, (_, i) => sqlKey(i + 1))];
    const truth = await loadsByErpKey(sim, keys);
    const counts = keys.map((k) => truth.get(k)?.length ?? 0);
    expect(counts.filter((n) => n === 0)).toHaveLength(0);
    expect(counts.filter((n) => n > 1)).toHaveLength(0);
    expect(truth.size).toBe(2 * N);

    // Write-back of the inbox file: every row done with ITS load's reference number.
    const resultFile = path.join(dir, 'inbox', 'processed', 'orders.csv.result.csv');
    expect(fs.existsSync(resultFile)).toBe(true);
    const results = parse(fs.readFileSync(resultFile, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    const source = fs.readFileSync(path.join(dir, 'inbox', 'processed', 'orders.csv'), 'utf8').split('\r\n');
    expect(results).toHaveLength(N + N / 10 + N / 20);
    for (const row of results) {
      const line = source[Number(row['ref']) - 1]!;
      const key = line.split(',')[0]!;
      expect(row['status']).toBe('done');
      expect(row['reference_number']).toBe(truth.get(key)![0]!['reference_number']);
    }

    // Write-back of the staging table.
    const staging = readStaging(erpDb);
    expect(staging).toHaveLength(N + N / 10);
    for (const row of staging) {
      expect(row.status).toBe('done');
      expect(row.reference_number).toBe(truth.get(row.erp_key)![0]!['reference_number']);
    }

    // Status changes after their create, in order: every 20th went AVAILABLE and then PENDING.
    for (let i = 10; i <= N; i += 10) {
      expect(truth.get(csvKey(i))![0]!['status']).toBe(i % 20 === 0 ? 'PENDING' : 'AVAILABLE');
      expect(truth.get(sqlKey(i))![0]!['status']).toBe('AVAILABLE');
    }
    const history = await statusHistory(sim);
    for (let i = 20; i <= N; i += 20) {
      const ref = String(truth.get(csvKey(i))![0]!['reference_number']);
      // The two status changes, in the ERP's order.
      expect(history.get(ref)?.slice(-2)).toEqual(['AVAILABLE', 'PENDING']);
    }

    await withApp(config, dir, async (app) => {
      expect(await new OutboxStore(app.db).countsByState()).toEqual({ done: 2 * N + N / 10 + N / 20 + N / 10 });
    });
  });
});
