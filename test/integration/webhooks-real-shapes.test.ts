import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listLoadDocumentTypes } from '../../src/api/endpoints/loads.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { CATCH_UP_KEY, catchUp } from '../../src/webhooks/catch-up.js';
import { startWebhookDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
import { waitFor } from '../helpers/lease-targets.js';

const SECRET = 'whsec-real-shapes-5c1d';

/**
 * Senders have been reported to spell the event type `event_type`. The simulator's realShapes
 * switch sends every body that way; the receiver must accept each one (200), never answer 400 and
 * make the sender retry until it gives up. The event log's `response.data` is the body that was
 * sent (§6.2), so a catch-up over deliveries that did arrive stores none of them again — a fresh-clone
 * CI run once found every event twice in the inbox, because the simulator logged the body before
 * reshaping it and a late start-up catch-up read the whole window.
 */
describe('webhooks with event_type (realShapes)', () => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    sim = await startSim({ loads: 500, seed: 21, realShapes: true });
    daemon = await startWebhookDaemon(sim, { dir: tempDir('wh-real-shapes'), secret: SECRET, streams: ['loads', 'invoices', 'events'] });
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it('accepts every delivery and stores it with its event type', { timeout: 120_000 }, async () => {
    // The daemon's start-up catch-up records its position once it has reached the API; set later,
    // it would overwrite the position this test sets below (a loaded fresh-clone CI run read 0).
    const cursor = z.strictObject({ readUpTo: z.string() });
    await waitFor(async () => (await daemon.app.stores.checkpoints.get(CATCH_UP_KEY, cursor)) !== undefined, 60_000, 'the start-up catch-up');
    sim.advance(1_000);
    const before = sim.now().toISOString();
    for (let i = 0; i < 5; i += 1) await sim.mutate(20);
    await sim.webhooksIdle();

    // The client computes the window's end from the server's clock as the `Date` headers it has
    // seen tell it (one-second resolution, a lower bound). Two seconds on, and one answer seen:
    // the end is surely past every event above, however early the daemon first saw the clock.
    sim.advance(2_000);
    await listLoadDocumentTypes(daemon.app.client, new AbortController().signal);
    // A catch-up over the whole window, as a start-up catch-up running late reads it.
    await daemon.app.stores.checkpoints.set(CATCH_UP_KEY, { readUpTo: before }, cursor);
    const { app } = daemon;
    const caughtUp = await catchUp(
      { client: app.client, inbox: app.stores.webhookInbox, checkpoints: app.stores.checkpoints, metrics: app.metrics, logger: silentLogger(), overlapMs: 1_000, maxAgeMs: 86_400_000, dedupeWindowMs: 3_600_000 },
      new AbortController().signal,
    );
    expect(caughtUp.read).toBeGreaterThan(0);
    expect(caughtUp.stored).toBe(0);
    const stats = sim.stats();
    expect(stats.webhooksSent).toBeGreaterThan(0);
    expect({ failed: stats.webhooksFailed, givenUp: stats.webhooksGivenUp }).toEqual({ failed: 0, givenUp: 0 });
    const rows = await daemon.app.db.selectFrom('webhook_inbox').select(['event_type', 'family']).execute();
    expect(rows.length).toBe(stats.webhooksSent);
    for (const row of rows) expect(row.event_type).toMatch(/^[a-z_]+#\S+$/i);
    expect(new Set(rows.map((row) => row.family)).has('load')).toBe(true);
  });
});
