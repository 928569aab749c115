import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpsMetrics } from '../../src/ops/metrics.js';
import type { AcceptOutcome, InboxEntry } from '../../src/state/stores/webhook-inbox-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { createReceiver } from '../../src/webhooks/receiver.js';

const SECRET = 'whsec-group-commit-9b2e';

/** An inbox whose group commits the test holds open, fails, or lets through. */
class HeldInbox {
  readonly groups: InboxEntry[][] = [];
  private release: Array<() => void> = [];
  failWith: Error | undefined;

  async accept(entry: InboxEntry): Promise<AcceptOutcome> {
    return (await this.acceptMany([entry]))[0]!;
  }

  async acceptMany(entries: readonly InboxEntry[]): Promise<AcceptOutcome[]> {
    this.groups.push([...entries]);
    await new Promise<void>((resolve) => this.release.push(resolve));
    if (this.failWith) throw this.failWith;
    return entries.map(() => 'stored');
  }

  /** Lets every commit started so far return. */
  commitAll(): void {
    for (const resolve of this.release.splice(0)) resolve();
  }

  get waiting(): number {
    return this.release.length;
  }
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function receiverOn(inbox: HeldInbox, onStored: (receivedAt: Date) => void = () => undefined): Promise<string> {
  const handler = createReceiver({
    secret: SECRET,
    maxBodyBytes: 64 * 1024,
    dedupeWindowMs: 60_000,
    inbox,
    metrics: new OpsMetrics(),
    logger: silentLogger(),
    // A clock that moves on at every reading: what the processor is told must be the stamp stored.
    now: ((t) => () => new Date((t += 1000)))(Date.parse('2026-11-26T10:00:00Z')),
    onStored,
    accepting: () => true,
  });
  server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/hooks`;
}

function deliver(url: string, n: number): Promise<number> {
  const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: `M${n}`, _id: `id${n}`, changedValues: { officeNote: `n${n}` } });
  const signature = `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
  return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Hub-Signature': signature }, body }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('condition not met');
}

describe('the webhook receiver commits deliveries in groups', () => {
  it('answers no delivery before the commit holding it returned, then 200 to each', async () => {
    const inbox = new HeldInbox();
    const told: string[] = [];
    const url = await receiverOn(inbox, (receivedAt) => told.push(receivedAt.toISOString()));
    const answered: number[] = [];
    const deliveries = Array.from({ length: 8 }, (_, n) => deliver(url, n).then((status) => (answered.push(status), status)));
    // A first group is committing and held open: however many turns pass, nothing is answered.
    await until(() => inbox.waiting > 0);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(answered).toEqual([]);
    while (answered.length < 8) {
      inbox.commitAll();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await Promise.all(deliveries)).toEqual(Array(8).fill(200));
    expect(inbox.groups.flat().map((e) => e.referenceNumber).sort()).toEqual(Array.from({ length: 8 }, (_, n) => `M${n}`).sort());
    // The processor is told of each stored event with the receipt time it was stored with.
    expect(told.sort()).toEqual(inbox.groups.flat().map((e) => e.receivedAt).sort());
  });

  it('answers 503 to every delivery of a group whose commit failed', async () => {
    const inbox = new HeldInbox();
    const url = await receiverOn(inbox);
    inbox.failWith = new Error('SQLITE_IOERR: disk I/O error');
    const deliveries = Array.from({ length: 6 }, (_, n) => deliver(url, n));
    await until(() => inbox.waiting > 0);
    let statuses: number[] | undefined;
    void Promise.all(deliveries).then((s) => (statuses = s));
    while (!statuses) {
      inbox.commitAll();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(statuses).toEqual(Array(6).fill(503));
  });
});
