import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { startWebhookDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { collectTruth, compareWithTruth, latestByKey, readCsvRows, startSim, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-brokerage-events-77a1';
const BROKERAGE_ONLY = ['appointments#port_pickup', 'appointments#consignee', 'appointments#port_return', 'tendor#status_changed', 'load#milestone'] as const;

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not met within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The §6.4 shape of each brokerage-only event, as the simulator logs (and sends) it. */
function expectSpecShape(eventType: string, body: Record<string, any>): void {
  if (eventType.startsWith('appointments#')) {
    // Appointment changes are load change events: brokerage wraps them under `data`.
    const inner = body['data'];
    expect(Object.keys(inner).sort()).toEqual(['_id', 'changedValues', 'eventType', 'reference_number']);
    const changed = inner.changedValues;
    if (eventType === 'appointments#port_return') {
      expect(Object.keys(changed).sort()).toEqual(['emptyOrigin', 'returnFromTime', 'returnToTime']);
      expect(Object.keys(changed.emptyOrigin).sort()).toEqual(['_id', 'address', 'company_name']);
    } else {
      const [field, from, to] = eventType === 'appointments#port_pickup' ? ['pickupTimes', 'pickupFromTime', 'pickupToTime'] : ['deliveryTimes', 'deliveryFromTime', 'deliveryToTime'];
      expect(Object.keys(changed)).toEqual([field]);
      for (const t of changed[field]) {
        expect(Object.keys(t).sort()).toEqual(['_id', 'customerId', from, to].sort());
        // §6.4: here `customerId` is an embedded object, not an id.
        expect(Object.keys(t.customerId).sort()).toEqual(['_id', 'address', 'company_name']);
      }
    }
  } else if (eventType === 'load#milestone') {
    expect(Object.keys(body).sort()).toEqual(['changedValues', 'eventType', 'reference_number', 'timestamp']);
    expect(Object.keys(body['changedValues']).sort()).toEqual(['event', 'eventTime']);
  } else {
    expect(Object.keys(body).sort()).toEqual(['carrierLoadReferenceNumber', 'changedValues', 'eventType', 'reference_number', 'tenderReferenceNumber']);
    expect(['accepted', 'rejected']).toContain(body['changedValues'].status);
  }
}

/**
 * Brokerage-only events (§6.3): the simulator's mutator emits each with its §6.4 payload, the
 * daemon accepts every delivery, unwraps it, refreshes the load it names (GET /loads/<ref>) into
 * the loads sink and records the event in the events stream.
 */
describe('brokerage-only webhook events', () => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;
  let dir: string;

  beforeAll(async () => {
    sim = await startSim({ variant: 'brokerage', loads: 300, seed: 33, strictEncoding: true });
    dir = tempDir('wh-brokerage-events');
    daemon = await startWebhookDaemon(sim, { dir, secret: SECRET, streams: ['loads', 'events'] });
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it('emits each with its §6.4 shape; each delivery refreshes its load and lands in the events stream', { timeout: 120_000 }, async () => {
    const logged = async () => (await collectTruth(sim, 'webhookEvents')).filter((e) => (BROKERAGE_ONLY as readonly string[]).includes(String(e['eventType'])));
    for (let round = 0; round < 40 && new Set((await logged()).map((e) => e['eventType'])).size < BROKERAGE_ONLY.length; round++) await sim.mutate(50);
    const events = await logged();
    expect(new Set(events.map((e) => e['eventType']))).toEqual(new Set(BROKERAGE_ONLY));
    for (const e of events) expectSpecShape(String(e['eventType']), e['data'] as Record<string, any>);

    await sim.webhooksIdle();
    expect({ failed: sim.stats().webhooksFailed, givenUp: sim.stats().webhooksGivenUp }).toEqual({ failed: 0, givenUp: 0 });
    const db = daemon.app.db;
    await until(async () => (await db.selectFrom('webhook_inbox').select('id').where('state', '=', 'pending').executeTakeFirst()) === undefined, 60_000, 'no pending webhook');
    const rows = await db.selectFrom('webhook_inbox').select(['event_type', 'family', 'reference_number', 'state', 'last_error']).execute();
    expect(rows.filter((r) => r.state !== 'done')).toEqual([]);

    // Every brokerage-only event was stored with the load it names, and recorded in the events stream.
    const out = path.join(dir, 'out');
    const eventRows = readCsvRows(out, 'events');
    const truth = new Map((await collectTruth(sim, 'loads')).map((l) => [String(l['reference_number']), l]));
    for (const type of BROKERAGE_ONLY) {
      const ofType = rows.filter((r) => r.event_type === type);
      expect(ofType.length, type).toBeGreaterThan(0);
      expect(ofType.every((r) => typeof r.reference_number === 'string' && truth.has(r.reference_number)), type).toBe(true);
      expect(eventRows.filter((r) => r['event_type'] === type).length, type).toBe(ofType.length);
    }
    // The targeted refreshes delivered each load an event named as the server has it now (nothing
    // changes any more): its latest CSV version carries the truth's updatedAt.
    const named = new Set(rows.filter((r) => (BROKERAGE_ONLY as readonly string[]).includes(r.event_type)).map((r) => r.reference_number!));
    const result = compareWithTruth([...named].map((ref) => truth.get(ref)!), latestByKey(readCsvRows(out, 'loads')), (r) => String(r.reference_number));
    expect({ missing: result.missing, stale: result.stale, wrongOp: result.wrongOp }).toEqual({ missing: [], stale: [], wrongOp: [] });
    // The tender answer is on the load (its EDI code), so the refresh had something new to deliver.
    const tender = rows.find((r) => r.event_type === 'tendor#status_changed')!;
    expect(['A', 'D']).toContain(truth.get(tender.reference_number!)!['acceptRejectCode']);
  });
});
