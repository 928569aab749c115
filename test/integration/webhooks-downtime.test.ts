import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listWebhookEvents } from '../../src/api/endpoints/webhook-events.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { readRowsWithMtime } from '../helpers/csv-mtimes.js';
import { freePort, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-downtime-test-93be20';
/** "Down for a minute", scaled for CI; run once with FREIGHT_SYNC_DOWNTIME_MS=60000 for the full minute. */
const DOWNTIME_MS = Number(process.env.FREIGHT_SYNC_DOWNTIME_MS ?? 10_000);
const TIE_TOLERANCE_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(100);
  }
}

describe('webhooks after downtime', () => {
  let sim: SimulatorHandle;
  let dir: string;
  let config: ReturnType<typeof pullConfig>;
  let daemon: RunningDaemon | undefined;

  beforeAll(async () => {
    sim = await startSim({ loads: 500, seed: 21 });
    dir = tempDir('wh-downtime');
    config = pullConfig({
      sim,
      dir,
      streams: ['loads', 'invoices', 'events'],
      // Polling off while the daemon runs (yearly cron): what lands before the final pass came by webhook or catch-up.
      streamSettings: { schedule: '0 0 1 1 *' },
      raw: {
        webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: SECRET, catchUpInterval: 'PT0S', catchUpOverlap: 'PT5S' },
        http: { listen: `127.0.0.1:${await freePort()}` },
      },
    });
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it(`catches up on changes made during ${DOWNTIME_MS} ms of downtime, and polling agrees with the truth`, { timeout: DOWNTIME_MS + 180_000 }, async () => {
    // 1. Initial sync, webhooks flowing.
    await syncOnce(config, dir);
    daemon = await startDaemon(config, dir);
    sim.configure({ webhooks: { url: webhookUrl(config), secret: SECRET } });
    sim.configure({ mutator: { enabled: true, intervalMs: 200, perTick: 3 } });
    await sleep(3_000);

    // 2. Down while changes keep happening.
    await daemon.stop();
    daemon = undefined;
    const downFrom = sim.now().getTime();
    await sleep(DOWNTIME_MS);
    const downTo = sim.now().getTime();

    // 3. Back up: catch-up reads the event log, the sender delivers what it still holds.
    daemon = await startDaemon(config, dir);
    await sleep(2_000);
    sim.configure({ mutator: { enabled: false, intervalMs: 200, perTick: 3 } });
    const db = daemon.app.db;
    await until(async () => (await db.selectFrom('webhook_inbox').select('id').where('state', '=', 'pending').executeTakeFirst()) === undefined, 60_000);
    await sleep(3_000);
    await until(async () => (await db.selectFrom('webhook_inbox').select('id').where('state', '=', 'pending').executeTakeFirst()) === undefined, 60_000);
    const fromLog = await db.selectFrom('webhook_inbox').select('id').where('source', '=', 'log').execute();
    const failed = await db.selectFrom('webhook_inbox').select(['event_type', 'last_error']).where('state', '=', 'failed').execute();

    // Every load change made while the daemon was down reached the CSV sink without polling.
    const changed: Array<{ ref: string; at: number }> = [];
    for (let skip = 0; ; skip += 50) {
      const page = await listWebhookEvents(daemon.app.client, { skip, limit: 50, sortBy: { createdAt: 1 } });
      for (const e of page.items as Array<Record<string, any>>) {
        const at = Date.parse(e.createdAt);
        if (String(e.eventType).startsWith('load#') && at >= downFrom && at <= downTo) changed.push({ ref: String(e.data.reference_number), at });
      }
      if (page.items.length < 50) break;
    }
    await daemon.stop();
    daemon = undefined;
    const rows = readRowsWithMtime(path.join(dir, 'out'), 'loads');
    const notDelivered = changed.filter((c) => !rows.some((r) => r.row.record_key === c.ref && Date.parse(r.row._updated_at ?? '') >= c.at - TIE_TOLERANCE_MS));
    console.log(`downtime ${DOWNTIME_MS} ms: ${changed.length} load events while down, ${fromLog.length} inbox events came from the event log catch-up`);
    expect(changed.length).toBeGreaterThan(0);
    expect(failed).toEqual([]);
    expect(notDelivered).toEqual([]);
    // The sender gives up after ~4 s of refused connections: some events exist only in the log.
    expect(fromLog.length).toBeGreaterThan(0);

    // 4. The polling safety net finds nothing the webhook path got wrong.
    await syncOnce(config, dir);
    const truth = await collectTruth(sim, 'loads');
    const result = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));
    expect({ missing: result.missing, stale: result.stale, wrongOp: result.wrongOp, phantom: result.phantom }).toEqual({ missing: [], stale: [], wrongOp: [], phantom: [] });
  });
});
