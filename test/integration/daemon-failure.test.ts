import { createHmac } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app/compose.js';
import { DaemonFailedError } from '../../src/app/daemon.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { OutboxStore, WebhookInboxStore } from '../../src/state/stores/index.js';
import { freePort, opsUrl, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { pullConfig, startSim, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-daemon-failure-7731';
const SUPERVISION = { maxConsecutiveFailures: 3, failurePauseMs: { base: 5, max: 10 } };

function diskError(): Error {
  return Object.assign(new Error('SQLITE_IOERR: disk I/O error'), { code: 'SQLITE_IOERR' });
}

/** The real stores, until the test breaks them: then every read the loop needs fails like a dead disk. */
class BreakableOutbox extends OutboxStore {
  broken = false;
  override async dueHeads(now: Date, limit: number): Promise<Array<{ id: number; load_group: string }>> {
    if (this.broken) throw diskError();
    return super.dueHeads(now, limit);
  }
}

class BreakableInbox extends WebhookInboxStore {
  broken = false;
  override async due(limit: number, now: string): ReturnType<WebhookInboxStore['due']> {
    if (this.broken) throw diskError();
    return super.due(limit, now);
  }
}

/** Settles within `ms`, or rejects saying what did not happen (so a hang fails the test instead of timing it out). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The HTTP status, or the error code when nothing answers. A fresh connection each time (no
 * keep-alive pool), so a closed server shows as ECONNREFUSED rather than a stale pooled socket.
 */
function probe(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end(init.body);
  });
}

function signedWebhook(): { method: string; body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: 'NOPE-1', _id: `evt-${Math.random()}`, changedValues: {} });
  return { method: 'POST', body, headers: { 'X-Hub-Signature': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}` } };
}

describe('the daemon stops as a whole when a service loop dies', () => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon | undefined;

  beforeAll(async () => {
    sim = await startSim({ loads: 50, customers: 5, consignees: 3, seed: 11 });
  });
  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });
  afterAll(async () => sim?.close());

  async function configFor(prefix: string) {
    const dir = tempDir(prefix);
    const [opsPort, webhookPort] = [await freePort(), await freePort()];
    const config = pullConfig({
      sim,
      dir,
      streams: ['customers', 'consignees', 'loads'],
      raw: {
        connectors: { out: { type: 'csv', options: { directory: path.join(dir, 'out') } } },
        outbound: { enabled: true, sources: [], pollInterval: 'PT0.2S', backoff: { base: 'PT0.05S', max: 'PT1S' }, reconcileDelay: 'PT0.05S' },
        webhooks: { enabled: true, listen: `127.0.0.1:${webhookPort}`, secret: SECRET, catchUpInterval: 'PT0S' },
        http: { enabled: true, listen: `127.0.0.1:${opsPort}` },
      },
    });
    return { dir, config };
  }

  /** Everything answers while the daemon is healthy (so "no longer answers" below means something). */
  async function expectServing(config: ReturnType<typeof pullConfig>): Promise<void> {
    expect(await probe(opsUrl(config, '/healthz'))).toBe(200);
    expect(await probe(webhookUrl(config), signedWebhook())).toBe(200);
  }

  async function expectNothingAccepts(config: ReturnType<typeof pullConfig>): Promise<void> {
    expect(await probe(opsUrl(config, '/healthz'))).toBe('ECONNREFUSED');
    expect(await probe(webhookUrl(config), signedWebhook())).toBe('ECONNREFUSED');
  }

  it('a failing outbox store: `done` rejects naming the outbound service and the store error; nothing accepts work afterwards', async () => {
    const { dir, config } = await configFor('daemon-failure-outbox');
    let outbox!: BreakableOutbox;
    const wrapApp = (app: AppContext): AppContext => {
      outbox = new BreakableOutbox(app.db);
      return { ...app, stores: { ...app.stores, outbox } };
    };
    daemon = await startDaemon(config, dir, { supervision: SUPERVISION, wrapApp });
    const failed: string[] = [];
    daemon.runner.events.on('service:failed', (name) => failed.push(name));
    await expectServing(config);

    outbox.broken = true;
    const error = await within(
      daemon.done.then(
        () => undefined,
        (e: unknown) => e,
      ),
      30_000,
      'the daemon to stop after the outbox store broke',
    );
    expect(error).toBeInstanceOf(DaemonFailedError);
    expect((error as DaemonFailedError).service).toBe('outbound');
    expect((error as Error).message).toMatch(/^service outbound failed: outbound dispatcher stopped after 3 failures in a row: SQLITE_IOERR: disk I\/O error$/);
    expect(failed).toEqual(['outbound']);
    await expectNothingAccepts(config);
  });

  it('a failing webhook inbox store: `done` rejects naming the webhooks service and the store error; nothing accepts work afterwards', async () => {
    const { dir, config } = await configFor('daemon-failure-inbox');
    let inbox!: BreakableInbox;
    const wrapApp = (app: AppContext): AppContext => {
      inbox = new BreakableInbox(app.db);
      return { ...app, stores: { ...app.stores, webhookInbox: inbox } };
    };
    daemon = await startDaemon(config, dir, { supervision: SUPERVISION, wrapApp });
    const failed: string[] = [];
    daemon.runner.events.on('service:failed', (name) => failed.push(name));
    await expectServing(config);

    inbox.broken = true;
    const error = await within(
      daemon.done.then(
        () => undefined,
        (e: unknown) => e,
      ),
      30_000,
      'the daemon to stop after the webhook inbox store broke',
    );
    expect(error).toBeInstanceOf(DaemonFailedError);
    expect((error as DaemonFailedError).service).toBe('webhooks');
    expect((error as Error).message).toBe('service webhooks failed: webhook processor stopped after 3 failures in a row: SQLITE_IOERR: disk I/O error');
    expect(failed).toEqual(['webhooks']);
    await expectNothingAccepts(config);
  });
});
