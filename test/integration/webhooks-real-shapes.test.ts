import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { startWebhookDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-real-shapes-5c1d';

/**
 * Senders have been reported to spell the event type `event_type`. The simulator's realShapes
 * switch sends every body that way; the receiver must accept each one (200), never answer 400 and
 * make the sender retry until it gives up.
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
    for (let i = 0; i < 5; i += 1) await sim.mutate(20);
    await sim.webhooksIdle();
    const stats = sim.stats();
    expect(stats.webhooksSent).toBeGreaterThan(0);
    expect({ failed: stats.webhooksFailed, givenUp: stats.webhooksGivenUp }).toEqual({ failed: 0, givenUp: 0 });
    const rows = await daemon.app.db.selectFrom('webhook_inbox').select(['event_type', 'family']).execute();
    expect(rows.length).toBe(stats.webhooksSent);
    for (const row of rows) expect(row.event_type).toMatch(/^[a-z_]+#\S+$/i);
    expect(new Set(rows.map((row) => row.family)).has('load')).toBe(true);
  });
});
