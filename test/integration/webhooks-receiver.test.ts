import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, opsUrl, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { collectTruth, pullConfig, readCsvRows, startSim, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-receiver-test-4f1c9a';
const RARE = '0 0 1 1 *';

function sign(body: string, secret = SECRET, prefix = 'sha1='): string {
  return `${prefix}${createHmac('sha1', secret).update(body).digest('hex')}`;
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  await response.arrayBuffer();
  return response.status;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A load change event as each variant sends it (§6.4): brokerage wraps the payload under `data`. */
function loadEvent(variant: 'main' | 'brokerage', payload: Record<string, unknown>): string {
  return JSON.stringify(variant === 'brokerage' ? { eventType: payload['eventType'], data: payload } : payload);
}

describe.each(['main', 'brokerage'] as const)('webhook receiver, %s', (variant) => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;
  let dir: string;
  let url: string;
  let config: ReturnType<typeof pullConfig>;

  beforeAll(async () => {
    sim = await startSim({ variant, loads: 200, seed: 7, strictEncoding: variant === 'brokerage' });
    dir = tempDir(`wh-receiver-${variant}`);
    config = pullConfig({
      sim,
      dir,
      streams: ['loads', 'events'],
      streamSettings: { schedule: RARE },
      raw: {
        webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, path: '/hooks/freight', secret: SECRET, maxBodyBytes: 4096, catchUpInterval: 'PT0S' },
        http: { listen: `127.0.0.1:${await freePort()}` },
      },
    });
    daemon = await startDaemon(config, dir);
    url = webhookUrl(config);
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  const inboxCount = async () => Number((await daemon.app.db.selectFrom('webhook_inbox').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('refuses 100 deliveries with bad or missing signatures and stores nothing', async () => {
    const body = loadEvent(variant, { eventType: 'load#info_updated', reference_number: 'X-1', _id: 'abc', changedValues: { officeNote: 'forged' } });
    const forged = [
      () => ({}),
      () => ({ 'X-Hub-Signature': '' }),
      () => ({ 'X-Hub-Signature': sign(body, 'wrong-secret') }),
      () => ({ 'X-Hub-Signature': sign(`${body} `) }),
      () => ({ 'X-Hub-Signature': sign(body).slice(0, -2) }),
      () => ({ 'X-Hub-Signature': sign(body).replace('sha1=', 'sha256=') }),
      () => ({ 'X-Hub-Signature': sign(body).replace('sha1=', '') }),
      () => ({ 'X-Hub-Signature': `sha1=${'0'.repeat(40)}` }),
      () => ({ 'X-Hub-Signature': `sha1=${'z'.repeat(40)}` }),
      () => ({ 'X-Hub-Signature': sign(body, SECRET.toUpperCase()) }),
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push(await post(url, body, forged[i % forged.length]!() as Record<string, string>));
    expect(statuses.every((s) => s === 401)).toBe(true);
    expect(await inboxCount()).toBe(0);
    const metrics = await (await fetch(opsUrl(config, '/metrics'))).text();
    const refused = [...metrics.matchAll(/^freight_sync_webhooks_refused_total\{reason="signature_[a-z]+"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(refused).toBe(100);
    expect(readCsvRows(path.join(dir, 'out'), 'events')).toHaveLength(0);
  });

  it('stores a good delivery once however often it is repeated, and refreshes the load', async () => {
    const [load, other] = await collectTruth(sim, 'loads');
    const ref = String(load!.reference_number);
    const body = loadEvent(variant, { changedValues: { officeNote: 'hello' }, _id: load!._id, reference_number: ref, eventType: 'load#info_updated' });
    // The spec shows both prefixes (§6.1).
    expect(await post(url, body, { 'X-Hub-Signature': sign(body, SECRET, 'sha=') })).toBe(200);
    for (let i = 0; i < 4; i++) expect(await post(url, body, { 'X-Hub-Signature': sign(body) })).toBe(200);
    expect(await inboxCount()).toBe(1);
    const out = path.join(dir, 'out');
    await until(() => readCsvRows(out, 'events').length > 0 && readCsvRows(out, 'loads').some((r) => r.record_key === ref));
    // A wrongly re-processed duplicate would be taken before anything received later (the inbox
    // is worked off oldest first). Instead of sleeping, send one more, different event and wait
    // until IT has landed: by then a duplicate of the first would have landed too.
    const laterRef = String(other!.reference_number);
    const later = loadEvent(variant, { changedValues: { officeNote: 'later' }, _id: other!._id, reference_number: laterRef, eventType: 'load#info_updated' });
    expect(await post(url, later, { 'X-Hub-Signature': sign(later) })).toBe(200);
    await until(() => readCsvRows(out, 'events').length > 1 && readCsvRows(out, 'loads').some((r) => r.record_key === laterRef));
    expect(readCsvRows(out, 'events')).toHaveLength(2);
    expect(readCsvRows(out, 'loads').filter((r) => r.record_key === ref)).toHaveLength(1);
    expect(readCsvRows(out, 'loads').filter((r) => r.record_key === laterRef)).toHaveLength(1);
    // The inbox row is settled just after the sinks acknowledged (the CSV rows may be visible a moment earlier).
    const inboxRows = () => daemon.app.db.selectFrom('webhook_inbox').select(['reference_number', 'state']).orderBy('id').execute();
    await until(async () => (await inboxRows()).every((r) => r.state !== 'pending'));
    const rows = await inboxRows();
    expect(rows).toEqual([
      { reference_number: ref, state: 'done' },
      { reference_number: laterRef, state: 'done' },
    ]);
  });

  it('answers 413 to a body over webhooks.maxBodyBytes and stores nothing', async () => {
    const before = await inboxCount();
    const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: 'BIG', pad: 'x'.repeat(10_000) });
    expect(await post(url, body, { 'X-Hub-Signature': sign(body) })).toBe(413);
    expect(await inboxCount()).toBe(before);
  });

  it('answers 400 to a signed body it cannot read, 405 to other methods, 404 elsewhere', async () => {
    const body = '{"no":"eventType"}';
    expect(await post(url, body, { 'X-Hub-Signature': sign(body) })).toBe(400);
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(url.replace('/hooks/freight', '/nope'), { method: 'POST', body })).status).toBe(404);
    expect(fs.existsSync(path.join(dir, 'state.sqlite'))).toBe(true);
  });
});
