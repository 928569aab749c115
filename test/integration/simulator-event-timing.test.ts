import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startApi, type Api } from './simulator-helpers.js';

let api: Api | undefined;
let receiver: Server | undefined;
afterEach(async () => {
  await api?.sim.close();
  api = undefined;
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  receiver = undefined;
});

/** A webhook receiver that records the bodies and headers it got and answers 200. */
async function recordingReceiver(): Promise<{ url: string; got: Array<{ body: string; headers: Record<string, unknown> }> }> {
  const got: Array<{ body: string; headers: Record<string, unknown> }> = [];
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push({ body, headers: { ...req.headers } });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(receiver!.address() as AddressInfo).port}/hooks`, got };
}

/**
 * The simulator-only event timing the latency bench reads: when the change behind each event
 * happened (the changed record's new updatedAt — shared by a whole tie group, earlier than the
 * events' createdAt) and when its delivery was sent and answered. None of it leaks into the API:
 * not in `GET /webhook/`, not in a delivered body or its headers.
 */
describe('simulator event timing', () => {
  it('stamps each event with its change time and delivery times, outside the API shapes', async () => {
    api = await startApi({ variant: 'main', loads: 300, seed: 5 });
    const { sim } = api;
    const { url, got } = await recordingReceiver();
    sim.configure({ webhooks: { url, secret: 'timing-secret' } });
    await sim.mutate(40);
    await sim.webhooksIdle();

    const timings = new Map(sim.eventTimings().map((t) => [t._id, t]));
    const loads = new Map<string, Record<string, unknown>>();
    for await (const load of sim.truth('loads')) loads.set(String(load['reference_number']), load);
    const events: Array<Record<string, unknown>> = [];
    for await (const e of sim.truth('webhookEvents')) events.push(e);
    expect(events.length).toBeGreaterThan(0);
    expect(timings.size).toBe(events.length);

    let checkedLoadEvents = 0;
    for (const event of events) {
      expect(event).not.toHaveProperty('timing');
      const timing = timings.get(Number(event['_id']))!;
      // A delivery was made for every event and answered after it was sent, after the change.
      expect(Date.parse(timing.sentAt!)).toBeGreaterThanOrEqual(Date.parse(timing.changedAt));
      expect(Date.parse(timing.answeredAt!)).toBeGreaterThanOrEqual(Date.parse(timing.sentAt!));
      expect(Date.parse(timing.changedAt)).toBeLessThanOrEqual(Date.parse(String(event['createdAt'])));
      const data = event['data'] as Record<string, unknown>;
      const load = loads.get(String(data['reference_number']));
      // The newest event of a load carries the load's current updatedAt as its change time.
      const newest = events.filter((e) => (e['data'] as Record<string, unknown>)['reference_number'] === data['reference_number'] && String(e['eventType']).startsWith('load#')).at(-1);
      if (String(event['eventType']).startsWith('load#') && load && newest === event) {
        expect(timing.changedAt).toBe(load['updatedAt']);
        checkedLoadEvents++;
      }
    }
    expect(checkedLoadEvents).toBeGreaterThan(0);

    const listed = await api.get('/webhook/?limit=50');
    expect(listed.status).toBe(200);
    for (const record of listed.body.data as Array<Record<string, unknown>>) expect(Object.keys(record).sort()).toEqual(['__v', '_id', 'createdAt', 'data', 'eventType', 'response', 'updatedAt', 'webhookUrl']);
    expect(got).toHaveLength(events.length);
    for (const delivery of got) {
      expect(delivery.body).not.toContain('changedAt');
      expect(Object.keys(delivery.headers).filter((h) => h.startsWith('x-') && h !== 'x-hub-signature')).toEqual([]);
    }

    const overAdmin = (await (await fetch(`${sim.adminUrl}/event-timings`)).json()) as Array<Record<string, unknown>>;
    expect(overAdmin).toEqual(sim.eventTimings());
  });
});
