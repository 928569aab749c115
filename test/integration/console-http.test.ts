import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, opsUrl, startDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { basicAuth, consoleRaw, csrfTokenOf, seedDeadLetter, seedRun } from '../helpers/console-fixtures.js';
import { pullConfig, startSim, tempDir } from '../helpers/pull-harness.js';

const HOSTILE = `<script>alert("pwned")</script><img src=x onerror="alert('x')">`;

/**
 * The console over plain HTTP against a running daemon: authentication, the CSRF defence of its
 * actions, and escaping of what the state holds (errors come from APIs and sinks).
 */
describe('web console (HTTP)', () => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;
  let config: ReturnType<typeof pullConfig>;
  let deadId: number;
  const url = (route: string) => opsUrl(config, route);
  const get = (route: string, authorization: string | null = basicAuth(), headers: Record<string, string> = {}) =>
    fetch(url(route), { redirect: 'manual', headers: { ...(authorization ? { Authorization: authorization } : {}), ...headers } });
  const post = (route: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(url(route), {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams(form).toString(),
      headers: { Authorization: basicAuth(), 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    });

  beforeAll(async () => {
    sim = await startSim({ loads: 20, seed: 5 });
    const dir = tempDir('console-http');
    config = pullConfig({
      sim,
      dir,
      streams: ['loads'],
      // Polling off: the state below is all the console shows.
      streamSettings: { schedule: '0 0 1 1 *' },
      raw: { http: { listen: `127.0.0.1:${await freePort()}`, console: consoleRaw() } },
    });
    daemon = await startDaemon(config, dir);
    await seedRun(daemon.app, 'loads', { status: 'ok', records: 120, requests: 4, lagSeconds: 300 });
    await seedRun(daemon.app, 'loads', { status: 'failed', records: 0, requests: 2, error: HOSTILE, lagSeconds: 900 });
    await daemon.app.stores.quarantine.recordSchemaRejections('loads', 'batch-1', [{ index: 0, problem: HOSTILE, raw: { reference_number: '<b>L1</b>' }, key: '<i>L1</i>' }]);
    deadId = await seedDeadLetter(daemon.app, 'ERP-<x>-1');
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it('answers 401 with a challenge without credentials, with a wrong password and a wrong user', async () => {
    for (const authorization of [null, basicAuth('ops', 'wrong-password'), basicAuth('root', 'console-pw-7f3a91'), 'Bearer console-pw-7f3a91']) {
      for (const route of ['/console/', '/console/outbox', '/console/assets/console.css', '/console/streams/loads']) {
        const response = await get(route, authorization);
        expect(response.status, `${route} with ${authorization ?? 'nothing'}`).toBe(401);
        expect(response.headers.get('www-authenticate')).toContain('Basic realm="freight-sync console"');
        expect(await response.text()).not.toContain('loads');
      }
    }
    const denied = await post('/console/actions/outbox-cancel', { id: String(deadId) }, { Authorization: basicAuth('ops', 'nope') });
    expect(denied.status).toBe(401);
    expect((await daemon.app.stores.outbox.get(deadId))?.state).toBe('dead');
  });

  it('serves the pages with a strict CSP, and / redirects to the console', async () => {
    const root = await get('/', null);
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    for (const route of ['/console/', '/console/streams/loads', '/console/outbox', '/console/rejected', '/console/webhooks', '/console/runs', '/console/runs?failed=1']) {
      const response = await get(route);
      expect(response.status, route).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      const page = await response.text();
      expect(page, route).not.toMatch(/<script|style=/i);
    }
    expect((await get('/console/streams/nope')).status).toBe(404);
    expect((await get('/console/streams/%E0%A4%A')).status).toBe(404);
    expect((await get('/console/nope')).status).toBe(404);
    expect((await get('/console')).headers.get('location')).toBe('/console/');
  });

  it('lists the stream with its lag, and charts its runs in SVG', async () => {
    const overview = await (await get('/console/')).text();
    expect(overview).toContain('data-stream="loads"');
    expect(overview).toContain('href="/console/streams/loads"');
    // The next run comes from the daemon's scheduler (a yearly cron here).
    expect(overview).toContain(`${new Date().getUTCFullYear() + 1}-01-01 00:00:00Z`);
    // The lag each run ended with.
    expect(await (await get('/console/runs')).text()).toContain('<td class="num">15 min</td>');
    const stream = await (await get('/console/streams/loads')).text();
    expect(stream).toContain('<svg class="chart"');
    expect(stream).toContain('Checkpoint lag at the end of each run');
    expect(stream).toContain('<polyline class="line"');
    expect(stream).toContain('<rect class="bar"');
    // Webhooks off: loads keeps the lookback (lateWriteCover auto), as `status` says.
    expect(stream).toMatch(/<dt>Late writes<\/dt><dd>covered by the lookback/);
  });

  it('escapes a hostile stream error and rejection everywhere it is shown', async () => {
    for (const route of ['/console/', '/console/streams/loads', '/console/runs', '/console/rejected', '/console/outbox']) {
      const page = await (await get(route)).text();
      expect(page, route).not.toContain('<script>alert');
      expect(page, route).not.toContain('<img src=x');
      expect(page, route).not.toContain('<i>L1</i>');
      expect(page, route).not.toContain('ERP-<x>-1');
    }
    const runs = await (await get('/console/runs')).text();
    expect(runs).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;');
    expect(await (await get('/console/rejected')).text()).toContain('&lt;i&gt;L1&lt;/i&gt;');
    expect(await (await get('/console/outbox')).text()).toContain('ERP-&lt;x&gt;-1');
  });

  it('refuses actions without the form token, with a foreign token, from another origin or site, and by GET', async () => {
    const page = await (await get('/console/outbox')).text();
    const csrf = csrfTokenOf(page);
    const same = { Origin: url('').replace(/\/$/, '') };
    const attempts: Array<{ why: string; form: Record<string, string>; headers?: Record<string, string> }> = [
      { why: 'no token', form: { id: String(deadId) }, headers: same },
      { why: 'forged token', form: { id: String(deadId), csrf: 'A'.repeat(csrf.length) }, headers: same },
      { why: 'foreign origin', form: { id: String(deadId), csrf }, headers: { Origin: 'http://evil.example' } },
      { why: 'cross-site fetch', form: { id: String(deadId), csrf }, headers: { 'Sec-Fetch-Site': 'cross-site' } },
      { why: 'opaque origin', form: { id: String(deadId), csrf }, headers: { Origin: 'null' } },
    ];
    for (const attempt of attempts) {
      const response = await post('/console/actions/outbox-cancel', attempt.form, attempt.headers);
      expect(response.status, attempt.why).toBe(403);
    }
    const viaGet = await get(`/console/actions/outbox-cancel?id=${deadId}&csrf=${encodeURIComponent(csrf)}`);
    expect(viaGet.status).toBe(405);
    expect((await daemon.app.stores.outbox.get(deadId))?.state).toBe('dead');

    // The same form with its token from the console's own origin goes through.
    const ok = await post('/console/actions/outbox-cancel', { id: String(deadId), csrf, back: '/console/outbox' }, { ...same, 'Sec-Fetch-Site': 'same-origin' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toMatch(/^\/console\/outbox\?flash=/);
    expect((await daemon.app.stores.outbox.get(deadId))?.state).toBe('cancelled');
    const after = await (await get(ok.headers.get('location')!)).text();
    expect(after).toContain(`outbox #${deadId}`);
    expect(after).toContain('now cancelled');
  });

  it('discards a rejected record from the page; an API-schema rejection cannot be retried', async () => {
    const [entry] = await daemon.app.stores.quarantine.list({ kinds: ['api-schema'] });
    const page = await (await get('/console/rejected')).text();
    expect(page).toContain(`data-rejected="${entry!.id}"`);
    // No retry button for what only the API can fix; a forged retry is answered, not carried out.
    expect(page).not.toContain(`data-action="rejected-retry" data-id="${entry!.id}"`);
    const csrf = csrfTokenOf(page);
    const retry = await post('/console/actions/rejected-retry', { id: String(entry!.id), csrf, back: '/console/rejected' });
    expect(await (await get(retry.headers.get('location')!)).text()).toContain('not-retryable');
    const discard = await post('/console/actions/rejected-discard', { id: String(entry!.id), csrf, back: '/console/rejected' });
    expect(discard.status).toBe(303);
    expect(await daemon.app.stores.quarantine.get(entry!.id)).toBeUndefined();
    expect(await (await get(discard.headers.get('location')!)).text()).toContain(`rejected #${entry!.id}`);
  });

  it('counts webhook receipts per family', async () => {
    const at = new Date().toISOString();
    const base = { eventType: 'load#info_updated', family: 'load', referenceNumber: 'L1', source: 'delivery' as const, occurredAt: null, receivedAt: at };
    await daemon.app.stores.webhookInbox.acceptMany(
      [1, 2, 3].map((i) => ({ ...base, key: `event:console-${i}`, body: `{"i":${i}}` })),
      60_000,
    );
    const page = await (await get('/console/webhooks')).text();
    expect(page).toMatch(/<tr><td>load<\/td><td>delivery<\/td><td class="num">3<\/td><td class="num">3<\/td><\/tr>/);
  });

  it('never redirects an action off the console', async () => {
    const csrf = csrfTokenOf(await (await get('/console/outbox')).text());
    const response = await post('/console/actions/outbox-retry', { id: String(deadId), csrf, back: '//evil.example/x' });
    expect(response.status).toBe(400);
  });
});
