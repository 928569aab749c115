import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, opsUrl, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { pullConfig, startSim, tempDir } from '../helpers/pull-harness.js';

const SECRET = 'whsec-ops-test-5521aa';

describe('ops endpoints', () => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;
  let config: ReturnType<typeof pullConfig>;

  beforeAll(async () => {
    sim = await startSim({ loads: 300, seed: 3, rateLimit: { requestsPerSecond: 20, burst: 2 } });
    const dir = tempDir('ops');
    const port = await freePort();
    config = pullConfig({
      sim,
      dir,
      streams: ['loads', 'invoices'],
      raw: {
        // One port for the receiver and the ops endpoints.
        webhooks: { enabled: true, listen: `127.0.0.1:${port}`, secret: SECRET, catchUpInterval: 'PT0S' },
        http: { listen: `127.0.0.1:${port}` },
      },
    });
    daemon = await startDaemon(config, dir, { runOnStart: true });
    // Let the initial sync run (it meets 429s from the small burst) and deliver a webhook.
    const until = Date.now() + 60_000;
    while (Date.now() < until) {
      const done = await daemon.app.db.selectFrom('runs').select('status').where('status', '!=', 'running').execute();
      if (done.length >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: 'NOPE-1', _id: 'x', changedValues: {} });
    await fetch(webhookUrl(config), { method: 'POST', body, headers: { 'X-Hub-Signature': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}` } });
    await fetch(webhookUrl(config), { method: 'POST', body, headers: { 'X-Hub-Signature': 'sha1=0000' } });
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it('/healthz answers 200', async () => {
    const response = await fetch(opsUrl(config, '/healthz'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('/ names the endpoints (the console is off by default, so /console/ is 404)', async () => {
    const response = await fetch(opsUrl(config, '/'));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ service: 'freight-sync', endpoints: ['/healthz', '/readyz', '/metrics'] });
    expect((await fetch(opsUrl(config, '/console/'))).status).toBe(404);
  });

  it('/readyz answers 200 naming every check when all pass', async () => {
    const response = await fetch(opsUrl(config, '/readyz'));
    const body = (await response.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    expect(response.status).toBe(200);
    expect(Object.keys(body.checks).sort()).toEqual(['api', 'connector:out', 'state']);
  });

  it('/metrics is valid Prometheus text with the documented families', async () => {
    const response = await fetch(opsUrl(config, '/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusText(await response.text());
    for (const name of [
      'freight_sync_records_written_total',
      'freight_sync_api_requests_total',
      'freight_sync_api_rate_limited_total',
      'freight_sync_api_retries_total',
      'freight_sync_api_rate_limit_wait_seconds_total',
      'freight_sync_checkpoint_lag_seconds',
      'freight_sync_outbox_depth',
      'freight_sync_webhooks_accepted_total',
      'freight_sync_webhooks_refused_total',
      'freight_sync_sink_write_seconds',
    ]) {
      expect(families.has(name), name).toBe(true);
    }
    const sum = (name: string, where: (l: Record<string, string>) => boolean = () => true, family = name) =>
      families.get(family)!.samples.filter((s) => s.name === name && where(s.labels)).reduce((n, s) => n + s.value, 0);
    expect(sum('freight_sync_records_written_total', (l) => l.stream === 'loads' && l.op === 'upsert')).toBeGreaterThan(0);
    expect(sum('freight_sync_api_requests_total', (l) => l.endpoint === 'GET /loads' && l.status === '200')).toBeGreaterThan(0);
    expect(sum('freight_sync_api_rate_limited_total')).toBeGreaterThan(0);
    expect(sum('freight_sync_webhooks_accepted_total')).toBe(1);
    expect(sum('freight_sync_webhooks_refused_total')).toBe(1);
    expect(families.get('freight_sync_checkpoint_lag_seconds')!.samples.map((s) => s.labels.stream).sort()).toEqual(['invoices', 'loads']);
    expect(sum('freight_sync_sink_write_seconds_count', (l) => l.outcome === 'ok', 'freight_sync_sink_write_seconds')).toBeGreaterThan(0);
  });
});

describe('ops endpoints with wrong API credentials', () => {
  it('/readyz answers 503 naming the api check', async () => {
    const sim = await startSim({ loads: 10 });
    const dir = tempDir('ops-bad-creds');
    const config = pullConfig({ sim, dir, streams: ['loads'], raw: { http: { listen: `127.0.0.1:${await freePort()}` } } });
    const bad = { ...config, api: { ...config.api, auth: { clientId: sim.options.clientId, clientSecret: 'definitely-wrong-secret' } } } as typeof config;
    const daemon = await startDaemon(bad, dir);
    try {
      const response = await fetch(opsUrl(bad, '/readyz'));
      const body = (await response.json()) as { status: string; checks: Record<string, { ok: boolean; error?: string }> };
      expect(response.status).toBe(503);
      expect(body.status).toBe('not ready');
      expect(body.checks.api!.ok).toBe(false);
      expect(body.checks.state!.ok).toBe(true);
      expect(JSON.stringify(body)).not.toContain('definitely-wrong-secret');
      // Cached: a second probe within readyCacheTtl does not ask the token endpoint again.
      const tokenCalls = () => Object.values(sim.stats().byRoute['POST /retrieve-token'] ?? {}).reduce((n, c) => n + c, 0);
      const before = tokenCalls();
      expect(before).toBeGreaterThan(0);
      expect((await fetch(opsUrl(bad, '/readyz'))).status).toBe(503);
      expect(tokenCalls()).toBe(before);
    } finally {
      await daemon.stop();
      await sim.close();
    }
  });
});
