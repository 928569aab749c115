import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { listLoads } from '../../src/api/endpoints/loads.js';
import { openState } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { issuePair, startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * Issue 11, item 4 (10-account cluster chaos: brokerage accounts with a bare token pair ended
 * reauth_required after a replica was SIGSTOPped inside a refresh). A refresher whose rotation
 * reached the server but whose answer came back after its lock expired (paused, starved) used to
 * cut that answer off at the lock's deadline — losing the only live pair — while the process that
 * took the expired lock over spent the rotated-away token and marked the account lost at once.
 * Now the late answer is kept and stored, and the taker waits the lock's life for it.
 */

/** Forwards everything to the simulator at once; token answers are held back while `holding`. */
async function answerDelayingProxy(upstream: string) {
  const target = new URL(upstream);
  const prefix = target.pathname.replace(/\/+$/, '');
  let holding = false;
  let heldAnswers = 0;
  const release: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const route = new URL(req.url ?? '/', 'http://x').pathname.slice(prefix.length);
      const hold = holding && route === '/generate-new-token';
      const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          const send = () => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(body));
          };
          if (!hold) return send();
          heldAnswers += 1;
          release.push(send);
        });
      });
      out.on('error', () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`,
    hold: (on: boolean) => (holding = on),
    heldAnswers: () => heldAnswers,
    releaseAll: () => release.splice(0).forEach((send) => send()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('a brokerage rotation answered after its lock expired', () => {
  it('is kept and stored; the process that took the expired lock over adopts it instead of marking the account lost', async () => {
    sim = await startSim({ variant: 'brokerage', loads: 50, accessTokenTtlMs: 60_000 });
    const credentials = await issuePair(sim);
    const proxy = await answerDelayingProxy(sim.baseUrl);
    const file = path.join(tempDir('token-late-rotation'), 'state.sqlite');
    const dbA = await openState({ kind: 'sqlite', path: file });
    await migrateToLatest(dbA);
    const dbB = await openState({ kind: 'sqlite', path: file });
    const client = (baseUrl: string, db: typeof dbA) =>
      new ApiClient({
        baseUrl,
        variant: 'brokerage',
        credentials,
        tokenStore: new SqlTokenStore(db),
        logger: silentLogger(),
        // A short lock so it expires while A's answer is held; B polls the store often.
        refreshLockTtlMs: 2_000,
        rateLimit: { requestsPerSecond: 500, maxInFlight: 2, adaptive: false },
        retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 50, maxElapsedMs: 60_000 },
      });
    // Both through the proxy (the account key in the store derives from the base URL); only A's
    // rotation is held.
    const a = client(proxy.baseUrl, dbA);
    const b = client(proxy.baseUrl, dbB);
    try {
      // Both hold the pair the config gave; the access token expires.
      sim.advance(61_000);
      proxy.hold(true);
      const aCall = listLoads(a, { skip: 0, limit: 5, sortBy: 'asc' });
      // The server rotated (the answer is held); A's lock runs out meanwhile.
      await until(() => proxy.heldAnswers() === 1, 'the server rotating for A');
      proxy.hold(false);
      const rotatedAt = Date.now();
      await until(() => Date.now() - rotatedAt > 2_500, 'A\'s lock to expire');
      const bCall = listLoads(b, { skip: 5, limit: 5, sortBy: 'asc' });
      // B took the expired lock, and spent the rotated-away token (unavoidable: it cannot know).
      await until(() => sim!.stats().retiredRefreshTokenUses === 1, 'B presenting the retired refresh token');
      proxy.releaseAll();
      expect((await aCall).items).toHaveLength(5);
      expect((await bCall).items).toHaveLength(5);
      expect(await b.tokens.reauthRequired()).toBeUndefined();
      // Both go on with the live pair: nothing else rotated away is ever used.
      sim.advance(61_000);
      expect((await listLoads(b, { skip: 10, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
      expect((await listLoads(a, { skip: 15, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
      expect(sim.stats().retiredRefreshTokenUses).toBe(1);
    } finally {
      a.close();
      b.close();
      await proxy.close();
      await dbA.destroy();
      await dbB.destroy();
    }
  }, 90_000);
});
