import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listWebhookEvents } from '../../src/api/endpoints/webhook-events.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { LOAD_FAMILIES } from '../../src/webhooks/refresh.js';
import { parseEvent } from '../../src/webhooks/webhook-event.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { freePort, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-downtime-test-93be20';
/**
 * "Down for a minute", scaled for CI: down until the simulator's sender has given up on at least
 * one delivery (its retries span ~4 s), so some changes exist only in the event log. Run once with
 * FREIGHT_SYNC_DOWNTIME_MS=60000 to stay down at least the full minute.
 */
const MIN_DOWNTIME_MS = Number(process.env.FREIGHT_SYNC_DOWNTIME_MS ?? 0);

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not met within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every load a logged event names, with when it was logged (both variants' shapes, brokerage-only families included). */
function loadEventsOf(items: Array<Record<string, any>>): Array<{ ref: string; at: number }> {
  const out: Array<{ ref: string; at: number }> = [];
  for (const e of items) {
    const event = parseEvent(JSON.stringify(e.data));
    if (LOAD_FAMILIES.has(event.family) && event.referenceNumber) out.push({ ref: event.referenceNumber, at: Date.parse(e.createdAt) });
  }
  return out;
}

describe.each(['main', 'brokerage'] as const)('webhooks after downtime, %s', (variant) => {
  let sim: SimulatorHandle;
  let dir: string;
  let config: ReturnType<typeof pullConfig>;
  let daemon: RunningDaemon | undefined;

  beforeAll(async () => {
    sim = await startSim({ variant, loads: 500, seed: 21, strictEncoding: variant === 'brokerage' });
    dir = tempDir(`wh-downtime-${variant}`);
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

  it(`catches up on changes made while down (until the sender gave up on a delivery${MIN_DOWNTIME_MS ? `, at least ${MIN_DOWNTIME_MS} ms` : ''}), and polling agrees with the truth`, { timeout: MIN_DOWNTIME_MS + 180_000 }, async () => {
    const deliveredSince = async (running: RunningDaemon, since: string) =>
      Number(
        (
          await running.app.db
            .selectFrom('webhook_inbox')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('source', '=', 'delivery')
            .where('state', '=', 'done')
            .where('received_at', '>=', since)
            .executeTakeFirstOrThrow()
        ).n,
      );

    // 1. Initial sync, webhooks flowing.
    await syncOnce(config, dir);
    daemon = await startDaemon(config, dir);
    const firstStart = new Date().toISOString();
    sim.configure({ webhooks: { url: webhookUrl(config), secret: SECRET } });
    sim.configure({ mutator: { enabled: true, intervalMs: 200, perTick: 3 } });
    const up = daemon;
    await until(async () => (await deliveredSince(up, firstStart)) >= 10, 60_000, '10 webhook deliveries processed before the downtime');

    // 2. Down while changes keep happening.
    await daemon.stop();
    daemon = undefined;
    const downFrom = sim.now().getTime();
    const downSince = Date.now();
    const givenUpBefore = sim.stats().webhooksGivenUp;
    await until(
      () => sim.stats().webhooksGivenUp > givenUpBefore && Date.now() - downSince >= MIN_DOWNTIME_MS,
      MIN_DOWNTIME_MS + 60_000,
      'the simulator gave up on a webhook delivery while the daemon was down',
    );
    const downTo = sim.now().getTime();

    // 3. Back up: catch-up reads the event log, the sender delivers what it still holds, and
    // changes keep coming until some fresh deliveries were processed.
    const log = capturingLogger('info');
    daemon = await startDaemon(config, dir, { logger: log.logger });
    const secondStart = new Date().toISOString();
    const again = daemon;
    await until(() => /webhook catch-up (read the event log|failed)/.test(log.text()), 60_000, 'the catch-up at start finished');
    expect(log.text()).toContain('webhook catch-up read the event log');
    await until(async () => (await deliveredSince(again, secondStart)) >= 10, 60_000, '10 webhook deliveries processed after the restart');
    sim.configure({ mutator: { enabled: false, intervalMs: 200, perTick: 3 } });
    // No change is made any more: once the sender holds nothing and the inbox has nothing pending, all arrived.
    await sim.webhooksIdle();
    const db = daemon.app.db;
    await until(async () => (await db.selectFrom('webhook_inbox').select('id').where('state', '=', 'pending').executeTakeFirst()) === undefined, 60_000, 'no pending webhook');
    const fromLog = await db.selectFrom('webhook_inbox').select('id').where('source', '=', 'log').execute();
    const failed = await db.selectFrom('webhook_inbox').select(['event_type', 'last_error']).where('state', '=', 'failed').execute();

    // Every load change made while the daemon was down reached the CSV sink without polling.
    const changed: Array<{ ref: string; at: number }> = [];
    if (variant === 'main') {
      for (let skip = 0; ; skip += 50) {
        const page = await listWebhookEvents(daemon.app.client, { skip, limit: 50, sortBy: { createdAt: 1 } });
        changed.push(...loadEventsOf(page.items as Array<Record<string, any>>));
        if (page.items.length < 50) break;
      }
    } else {
      // Brokerage has no paging here (§4.6): one answer holds the whole window.
      const page = await listWebhookEvents(daemon.app.client, { occurred_from: new Date(downFrom).toISOString(), occurred_to: new Date(downTo).toISOString() });
      changed.push(...loadEventsOf(page.items as Array<Record<string, any>>));
    }
    changed.splice(0, changed.length, ...changed.filter((c) => c.at >= downFrom && c.at <= downTo));
    await daemon.stop();
    daemon = undefined;
    // Every load changed while down is in the sink as the server has it now (nothing changes any
    // more): its latest CSV version carries the truth's updatedAt and delete flag. Compared with
    // the truth rather than with each event's createdAt: the simulator stamps a tie group of loads
    // before it emits their events, which on a loaded machine can be more than a few ms apart.
    const changedRefs = new Set(changed.map((c) => c.ref));
    const changedTruth = (await collectTruth(sim, 'loads')).filter((load) => changedRefs.has(String(load.reference_number)));
    expect(changedTruth.length).toBe(changedRefs.size);
    const viaWebhooks = compareWithTruth(changedTruth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));
    const notDelivered = [...viaWebhooks.missing, ...viaWebhooks.stale, ...viaWebhooks.wrongOp];
    console.log(`downtime ${downTo - downFrom} ms: ${changed.length} load events while down, ${fromLog.length} inbox events came from the event log catch-up`);
    expect(changed.length).toBeGreaterThan(0);
    expect(failed).toEqual([]);
    expect(notDelivered).toEqual([]);
    // The sender gives up after ~4 s of refused connections: some events exist only in the log.
    expect(fromLog.length).toBeGreaterThan(0);

    // 4. The polling safety net finds nothing the webhook path got wrong. Its window ends at the
    // server clock minus the safety lag — and, loads being under the lag's cover with webhooks on
    // (lateWriteCover: auto), minus the lookback: move the clock past the last changes instead of sleeping.
    ageChangesPastSafetyLag(sim, config.sync.defaults.safetyLag + config.sync.defaults.lookback);
    await syncOnce(config, dir);
    const truth = await collectTruth(sim, 'loads');
    const result = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out'), 'loads')), (r) => String(r.reference_number));
    expect({ missing: result.missing, stale: result.stale, wrongOp: result.wrongOp, phantom: result.phantom }).toEqual({ missing: [], stale: [], wrongOp: [], phantom: [] });
  });
});
