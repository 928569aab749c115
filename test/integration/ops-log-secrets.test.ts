import { createHmac } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../helpers/log-capture.js';
import { freePort, opsUrl, startDaemon, webhookUrl } from '../helpers/daemon-harness.js';
import { pullConfig, startSim, tempDir } from '../helpers/pull-harness.js';

const WEBHOOK_SECRET = 'whsec-log-test-c0ffee42';
const DB_PASSWORD = 'db-pass-Q7!x9zz';
const CLIENT_SECRET = 'client-secret-log-test-8812';

describe('no secret in any log line', () => {
  it('holds for a whole daemon run against the simulator at debug level', async () => {
    // Short-lived access tokens: several refreshes happen during the run.
    const sim = await startSim({ loads: 200, seed: 5, clientSecret: CLIENT_SECRET, accessTokenTtlMs: 1_500 });
    const dir = tempDir('log-secrets');
    const config = pullConfig({
      sim,
      dir,
      streams: ['loads', 'invoices', 'events'],
      raw: {
        connectors: {
          out: { type: 'csv', options: { directory: path.join(dir, 'out') } },
          erp: { module: path.resolve('test/fixtures/connectors/password-sink.mjs'), options: { host: 'db.local', user: 'erp', password: DB_PASSWORD } },
        },
        webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: WEBHOOK_SECRET, catchUpInterval: 'PT1S' },
        http: { listen: `127.0.0.1:${await freePort()}`, readyCacheTtl: 'PT0.1S' },
      },
    });
    for (const stream of ['loads', 'invoices', 'events'] as const) config.sync.streams[stream]!.sinks = ['out', 'erp'];
    const { logger, lines } = capturingLogger('debug');
    const tokens = new Set<string>();
    const daemon = await startDaemon(config, dir, { runOnStart: true, logger });
    // Every access and refresh token the daemon held: read from its store while it runs.
    const collector = setInterval(() => {
      void daemon.app.db
        .selectFrom('tokens')
        .select(['access_token', 'refresh_token'])
        .execute()
        .then((rows) => rows.forEach((r) => [r.access_token, r.refresh_token].forEach((t) => t && tokens.add(t))))
        .catch(() => undefined);
    }, 50);
    try {
      sim.configure({ webhooks: { url: webhookUrl(config), secret: WEBHOOK_SECRET } });
      sim.configure({ mutator: { enabled: true, intervalMs: 100, perTick: 3 } });
      const forged = JSON.stringify({ eventType: 'load#info_updated', reference_number: 'X' });
      await fetch(webhookUrl(config), { method: 'POST', body: forged, headers: { 'X-Hub-Signature': `sha1=${createHmac('sha1', 'not-the-secret').update(forged).digest('hex')}` } });
      await fetch(webhookUrl(config), { method: 'POST', body: forged, headers: { 'X-Hub-Signature': WEBHOOK_SECRET, Authorization: `Bearer ${CLIENT_SECRET}` } });
      // Run until the paths that could leak have all been exercised (asserted below), with a
      // generous deadline. The server clock runs ahead 0.5 s per round, so the 1.5 s access
      // tokens expire (by the server's clock, which the client follows) without waiting for them.
      const exercised = () => {
        const text = lines.join('\n');
        return tokens.size >= 4 && lines.length > 50 && ['password sink created', 'batch written', 'webhook accepted', 'webhook refused'].every((t) => text.includes(t));
      };
      const deadline = Date.now() + 60_000;
      let readyChecks = 0;
      while ((readyChecks < 10 || !exercised()) && Date.now() < deadline) {
        await fetch(opsUrl(config, '/readyz')).then((r) => r.arrayBuffer());
        readyChecks++;
        sim.advance(500);
        await new Promise((r) => setTimeout(r, 100));
      }
      sim.configure({ mutator: { enabled: false, intervalMs: 100, perTick: 3 } });
    } finally {
      clearInterval(collector);
      await daemon.stop();
      await sim.close();
    }

    expect(tokens.size).toBeGreaterThanOrEqual(4);
    expect(lines.length).toBeGreaterThan(50);
    // Proof the run exercised the paths that could leak: debug lines, the password sink, webhooks, refreshes.
    const text = lines.join('\n');
    expect(text).toContain('password sink created');
    expect(text).toContain('batch written');
    expect(text).toContain('webhook accepted');
    expect(text).toContain('webhook refused');
    const secrets = [CLIENT_SECRET, WEBHOOK_SECRET, DB_PASSWORD, ...tokens];
    const leaking = secrets.filter((s) => lines.some((line) => line.includes(s))).map((s) => `${s.slice(0, 4)}… (${s.length} chars)`);
    expect(leaking).toEqual([]);
  });
});
