import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { ApiNetworkError } from '../../src/api/errors.js';
import { createLoad, listLoads } from '../../src/api/endpoints/loads.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { silentLogger } from '../../src/util/logger.js';

/** A real loopback server that drops the connection of chosen requests (nock cannot reset sockets here). */
let server: http.Server;
let baseUrl: string;
const plan: Array<'drop' | 'ok'> = [];
let posts = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url?.startsWith('/v1/retrieve-token')) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ _object: '/api/response', data: { access_token: 'opaque-access-123', refresh_token: 'opaque-refresh-123' } }));
        return;
      }
      if (req.method === 'POST') posts += 1;
      const step = plan.shift() ?? 'ok';
      if (step === 'drop') {
        req.socket.destroy();
        return;
      }
      res.setHeader('content-type', 'application/json');
      const data = req.method === 'POST' ? { _id: 'n', reference_number: 'NEW' } : [{ _id: '1', reference_number: 'A' }];
      res.end(JSON.stringify({ _object: '/api/response', data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client() {
  return new ApiClient({
    baseUrl,
    variant: 'main',
    credentials: { clientId: 'c', clientSecret: 'secret-secret' },
    tokenStore: new InMemoryTokenStore(),
    logger: silentLogger(),
    rateLimit: { requestsPerSecond: 1000, maxInFlight: 2, adaptive: false },
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, maxElapsedMs: 5000 },
  });
}

describe('ApiClient over real sockets', () => {
  it('retries a GET whose connection was dropped', async () => {
    plan.push('drop', 'drop');
    const c = client();
    const page = await listLoads(c, { limit: 50 });
    expect(page.items).toHaveLength(1);
    expect(c.stats.networkErrors).toBe(2);
    c.close();
  });

  it('does not retry a POST /loads whose connection was dropped (ambiguous) and says it may have been processed', async () => {
    plan.push('drop');
    const before = posts;
    const c = client();
    const error = await createLoad(c, { type_of_load: 'IMPORT' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiNetworkError);
    expect((error as ApiNetworkError).mayHaveBeenProcessed).toBe(true);
    expect(posts - before).toBe(1);
    c.close();
  });
});
