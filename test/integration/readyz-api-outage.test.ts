import { describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, opsUrl, startDaemon } from '../helpers/daemon-harness.js';
import { pullConfig, startSim, tempDir } from '../helpers/pull-harness.js';

type Readyz = { status: number; body: { status: string; checks: Record<string, { ok: boolean; error?: string }> } };

async function readyz(url: string): Promise<Readyz> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Readyz['body'] };
}

async function waitForReadyz(url: string, want: (r: Readyz) => boolean, what: string, ms = 30_000): Promise<Readyz> {
  const deadline = Date.now() + ms;
  let last: Readyz | undefined;
  while (Date.now() < deadline) {
    last = await readyz(url);
    if (want(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for /readyz ${what}; last answer: ${JSON.stringify(last)}`);
}

/**
 * `/readyz` follows the API, not a cached token: the simulator goes away (connection refused) and
 * readiness fails once `http.apiUnreachableAfter` has passed, naming the cause; it comes back on
 * the same port and readiness recovers. No stream runs (yearly schedule): the daemon has no
 * traffic of its own, so readiness must find out by itself.
 */
describe('/readyz through an API outage', () => {
  it('turns 503 naming the unreachable API while the simulator is down, and 200 again once it is back', async () => {
    const port = await freePort();
    let sim: SimulatorHandle | undefined = await startSim({ port, loads: 5 });
    const dir = tempDir('readyz-outage');
    const config = pullConfig({
      sim,
      dir,
      streams: ['loads'],
      streamSettings: { schedule: '0 0 1 1 *' },
      raw: { http: { listen: `127.0.0.1:${await freePort()}`, readyCacheTtl: 'PT0S', checkTimeout: 'PT2S', apiUnreachableAfter: 'PT1S' } },
    });
    config.api.retry.maxAttempts = 1;
    const daemon = await startDaemon(config, dir, { runOnStart: false });
    const url = opsUrl(config, '/readyz');
    try {
      expect((await readyz(url)).status).toBe(200);

      await sim.close();
      sim = undefined;
      const down = await waitForReadyz(url, (r) => r.status === 503, '503 while the API is down');
      expect(down.body.checks.state!.ok).toBe(true);
      expect(down.body.checks.api!.ok).toBe(false);
      expect(down.body.checks.api!.error).toMatch(/^the API has not answered for \d+ s \(since .*\); last failure: GET \/load-document-type: ECONNREFUSED$/);

      sim = await startSim({ port, loads: 5 });
      const back = await waitForReadyz(url, (r) => r.status === 200, '200 once the API is back');
      expect(back.body.checks.api!.ok).toBe(true);
    } finally {
      await daemon.stop();
      await sim?.close();
    }
  });
});
