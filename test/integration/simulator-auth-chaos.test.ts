import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import { retrieveToken } from './simulator-helpers.js';

const handles: SimulatorHandle[] = [];
async function start(options: Parameters<typeof startSimulator>[0]) {
  const sim = await startSimulator(options);
  handles.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('auth (§5)', () => {
  it('brokerage rotation invalidates the old refresh token at once; /token does not exist', async () => {
    const sim = await start({ variant: 'brokerage', loads: 100 });
    const { access, refresh } = await retrieveToken(sim);
    expect(access.split('.')).toHaveLength(3);
    const payload = JSON.parse(Buffer.from(access.split('.')[1] as string, 'base64url').toString());
    expect(typeof payload.exp).toBe('number');
    const rotated = (await (await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(refresh) })).json()) as any;
    expect(rotated.data).toMatchObject({ tokenType: 'public' });
    expect(rotated.data.token).toBeTruthy();
    expect(rotated.data.refresh_token).not.toBe(refresh);
    const reuse = await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(refresh) });
    expect(reuse.status).toBe(401);
    // Both access tokens still work: several may be active.
    expect((await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) })).status).toBe(200);
    expect((await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(rotated.data.token) })).status).toBe(200);
    expect((await fetch(`${sim.baseUrl}/token`, { headers: bearer(rotated.data.refresh_token) })).status).toBe(404);
  });

  it('a retired refresh token presented again is counted, and told apart when its rotation\'s answer was lost', async () => {
    const sim = await start({ variant: 'brokerage', loads: 100 });
    const rotate = async (refresh: string) => ((await (await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(refresh) })).json()) as any).data as { token: string; refresh_token: string };
    const { refresh: r0 } = await retrieveToken(sim);
    // Rotated, and the answer lost (nobody ever presents the new pair): the next use of r0 is
    // what any client would do, since nobody could know the new pair.
    const before = Date.now();
    await rotate(r0);
    expect((await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(r0) })).status).toBe(401);
    expect(sim.stats()).toMatchObject({ retiredRefreshTokenUses: 1, retiredRefreshTokenUsesAfterLostAnswer: 1 });
    expect(sim.stats().lostRotationAnswersAtMs).toHaveLength(1);
    expect(sim.stats().lostRotationAnswersAtMs[0]).toBeGreaterThanOrEqual(before);

    // Rotated and the answer used (its access token reached the server): r1 again is a client bug.
    sim.revokeRefreshTokens();
    const { refresh: r1 } = await retrieveToken(sim);
    const next = await rotate(r1);
    expect((await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(next.token) })).status).toBe(200);
    expect((await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(r1) })).status).toBe(401);
    // Same when the new refresh token itself was presented (rotated again here).
    const third = await rotate(next.refresh_token);
    await rotate(third.refresh_token);
    expect((await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(next.refresh_token) })).status).toBe(401);
    expect(sim.stats()).toMatchObject({ retiredRefreshTokenUses: 3, retiredRefreshTokenUsesAfterLostAnswer: 1 });
  });

  it('a rotation whose answer the simulator cut short is counted as such when its old token comes back', async () => {
    const sim = await start({ variant: 'brokerage', loads: 100 });
    const { refresh } = await retrieveToken(sim);
    sim.configure({ faults: { rate: 1, kinds: ['truncated'], slowMs: 0 } });
    const cut = await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(refresh) });
    await cut.text().catch(() => '');
    sim.configure({ faults: { rate: 0, kinds: ['truncated'], slowMs: 0 } });
    expect((await fetch(`${sim.baseUrl}/generate-new-token`, { headers: bearer(refresh) })).status).toBe(401);
    expect(sim.stats()).toMatchObject({ rotationAnswersCut: 1, retiredRefreshTokenUses: 1, retiredRefreshTokenUsesAfterLostAnswer: 1, retiredRefreshTokenUsesAfterCutAnswer: 1, lostRotationAnswersAtMs: [] });
  });

  it('main /token keeps the refresh token valid; expiry and revocation give 401', async () => {
    const sim = await start({ variant: 'main', loads: 100, accessTokenTtlMs: 1000 });
    const { access, refresh } = await retrieveToken(sim);
    for (let i = 0; i < 2; i++) {
      const res = (await (await fetch(`${sim.baseUrl}/token`, { headers: bearer(refresh) })).json()) as any;
      expect(res.data.access_token).toBeTruthy();
      expect(res.data).not.toHaveProperty('refresh_token');
    }
    // Jump the server clock past the access token's exp.
    sim.configure({ clockOffsetMs: 5_000 });
    const expired = await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) });
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as any)._object).toBe('/api/error');
    sim.revokeRefreshTokens();
    expect((await fetch(`${sim.baseUrl}/token`, { headers: bearer(refresh) })).status).toBe(401);
    const again = await retrieveToken(sim);
    expect(again.refresh).not.toBe(refresh);
    const bad = await fetch(`${sim.baseUrl}/retrieve-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ clientId: 'x', clientSecret: 'y' }) });
    expect(bad.status).toBe(401);
  });
});

describe('rate limit, faults, clock', () => {
  it('429 with Retry-After in seconds or as an HTTP-date, counted in stats', async () => {
    const sim = await start({ loads: 100, rateLimit: { requestsPerSecond: 1, burst: 3 } });
    const { access } = await retrieveToken(sim);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(((await res.json()) as any).status).toBe(429);
      } else await res.arrayBuffer();
    }
    expect(statuses).toContain(429);
    expect(retryAfter).toMatch(/^\d+$/);
    expect(sim.stats().rateLimited).toBeGreaterThan(0);
    sim.configure({ rateLimit: { requestsPerSecond: 0.5, burst: 1 } });
    (sim.options as { retryAfterFormat: string }).retryAfterFormat = 'http-date';
    await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) }).then((r) => r.arrayBuffer());
    const limited = await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) });
    expect(limited.status).toBe(429);
    const date = limited.headers.get('retry-after') as string;
    expect(Number.isNaN(Date.parse(date))).toBe(false);
    expect(Date.parse(date)).toBeGreaterThan(Date.now() - 2000);
  });

  it('Date header follows the server clock offset', async () => {
    const offset = 3 * 3_600_000;
    const sim = await start({ loads: 10, clockOffsetMs: offset });
    const res = await fetch(`${sim.baseUrl}/loads`);
    const date = Date.parse(res.headers.get('date') as string);
    expect(Math.abs(date - (Date.now() + offset))).toBeLessThan(5_000);
    expect(Math.abs(sim.now().getTime() - (Date.now() + offset))).toBeLessThan(1_000);
  });

  it('advance moves the Date header, new record timestamps and token expiry together; also over /__admin/advance', async () => {
    const sim = await start({ loads: 50, accessTokenTtlMs: 60_000 });
    const { access } = await retrieveToken(sim);
    const serverDate = async () => Date.parse((await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) })).headers.get('date') as string);
    const before = sim.now().getTime();
    const dateBefore = await serverDate();
    expect(sim.advance(30_000).getTime() - before).toBeGreaterThanOrEqual(30_000);
    // The Date header has one-second resolution.
    expect((await serverDate()) - dateBefore).toBeGreaterThanOrEqual(29_000);
    await sim.mutate(1);
    const stamps: number[] = [];
    for await (const e of sim.truth('webhookEvents')) stamps.push(Date.parse(String(e.createdAt)));
    expect(stamps.length).toBeGreaterThan(0);
    for (const at of stamps) expect(at).toBeGreaterThanOrEqual(before + 30_000);
    // The token is still valid after 30 s of its 60 …
    expect((await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) })).status).toBe(200);
    // … and expired after 31 more, moved over the admin endpoint.
    const admin = await fetch(`${sim.adminUrl}/advance?ms=31000`, { method: 'POST' });
    expect(admin.status).toBe(200);
    expect(Date.parse(((await admin.json()) as any).now) - before).toBeGreaterThanOrEqual(61_000);
    expect((await fetch(`${sim.baseUrl}/loads?limit=1`, { headers: bearer(access) })).status).toBe(401);
    // Forward only: timestamps the simulator wrote must stay non-decreasing.
    expect(() => sim.advance(-1)).toThrow(RangeError);
    expect((await fetch(`${sim.adminUrl}/advance?ms=-5`, { method: 'POST' })).status).toBe(400);
    expect((await fetch(`${sim.adminUrl}/advance`, { method: 'POST' })).status).toBe(400);
  });

  const kinds = ['500', '502', '503', 'html', 'drop', 'slow', 'truncated'] as const;
  for (const kind of kinds) {
    it(`fault ${kind}`, async () => {
      const sim = await start({ loads: 200, faults: { rate: 0, kinds: [kind], slowMs: 300 } });
      const { access } = await retrieveToken(sim);
      sim.configure({ faults: { rate: 1, kinds: [kind], slowMs: 300 } });
      const started = Date.now();
      let res: Response | undefined;
      let error: unknown;
      try {
        res = await fetch(`${sim.baseUrl}/loads?limit=50`, { headers: bearer(access) });
      } catch (e) {
        error = e;
      }
      if (kind === 'drop') {
        expect(error).toBeDefined();
      } else if (kind === 'truncated') {
        // The head is intact: a 200 that looks like any other answer.
        expect(error).toBeUndefined();
        expect(res?.status).toBe(200);
        const declared = Number(res!.headers.get('content-length'));
        // The body is cut short. Either Content-Length is honest about the cut (the read completes
        // but the JSON does not parse), or it promises the whole body and the socket closes
        // mid-body (the read fails). A complete, parseable body fails the test either way.
        const read = await res!.arrayBuffer().then(
          (buffer) => ({ ok: true as const, bytes: Buffer.from(buffer) }),
          (failure: unknown) => ({ ok: false as const, failure }),
        );
        if (read.ok) {
          expect(read.bytes.length).toBe(declared);
          expect(() => JSON.parse(read.bytes.toString('utf8'))).toThrow();
        } else {
          // undici reports a body that ended before Content-Length as `TypeError: terminated`.
          expect(read.failure).toBeInstanceOf(TypeError);
        }
      } else if (kind === 'slow') {
        expect(res?.status).toBe(200);
        expect(Date.now() - started).toBeGreaterThanOrEqual(290);
        expect(((await (res as Response).json()) as any).data).toHaveLength(50);
      } else if (kind === 'html') {
        expect(res?.status).toBe(502);
        expect(res?.headers.get('content-type')).toMatch(/text\/html/);
        expect(await (res as Response).text()).toMatch(/<html>/);
      } else {
        expect(res?.status).toBe(Number(kind));
        expect(((await (res as Response).json()) as any)).toMatchObject({ _object: '/api/error', status: Number(kind) });
      }
      expect(sim.stats().faults[kind]).toBe(1);
      // Admin routes are never faulted.
      expect((await fetch(`${sim.adminUrl}/stats`)).status).toBe(200);
    });
  }

  it('ambiguous create: the load exists although the client saw a failure', async () => {
    const sim = await start({ loads: 50, ambiguousCreateRate: 1 });
    const { access } = await retrieveToken(sim);
    const customers = (await (await fetch(`${sim.baseUrl}/customer/?limit=1`, { headers: bearer(access) })).json()) as any;
    const caller = customers.data[0]._id;
    let status: number | 'error' = 'error';
    try {
      const res = await fetch(`${sim.baseUrl}/loads`, { method: 'POST', headers: { ...bearer(access), 'content-type': 'application/json' }, body: JSON.stringify({ type_of_load: 'ROAD', preSetOrderStatus: '', caller, shipper: [caller], secondaryReferenceNo: 'AMB-1' }) });
      status = res.status;
    } catch {
      status = 'error';
    }
    expect(status === 502 || status === 'error').toBe(true);
    expect(sim.stats().ambiguousCreates).toBe(1);
    const found = (await (await fetch(`${sim.baseUrl}/loads?searchTerm=AMB-1`, { headers: bearer(access) })).json()) as any;
    expect(found.data).toHaveLength(1);
  });
});

describe('webhooks', () => {
  it('delivers signed events, retries non-200 answers and records the status', async () => {
    const { createHmac } = await import('node:crypto');
    const received: Array<{ body: string; sig: string; type: string }> = [];
    let failFirst = true;
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (failFirst) {
          failFirst = false;
          res.statusCode = 500;
          res.end();
          return;
        }
        received.push({ body, sig: String(req.headers['x-hub-signature']), type: String(req.headers['content-type']) });
        res.statusCode = 200;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const port = (receiver.address() as { port: number }).port;
    try {
      const sim = await start({ loads: 100, webhooks: { url: `http://127.0.0.1:${port}/hook`, secret: 's3cret' } });
      await sim.mutate(5);
      // Every queued event delivered (the first after one retry) or given up on.
      await sim.webhooksIdle();
      expect(received.length).toBeGreaterThan(0);
      for (const r of received) {
        expect(r.type).toMatch(/application\/json/);
        expect(r.sig).toBe(`sha1=${createHmac('sha1', 's3cret').update(r.body).digest('hex')}`);
      }
      const events: any[] = [];
      for await (const e of sim.truth('webhookEvents')) events.push(e);
      expect(events[0].response.statusCode).toBe(200); // first attempt failed, the retry succeeded
      expect(events[0].webhookUrl).toBe(`http://127.0.0.1:${port}/hook`);
      expect(sim.stats().webhooksFailed).toBe(1);
      expect(sim.stats().webhooksGivenUp).toBe(0);
      expect(sim.stats().webhooksSent).toBe(events.length);
      expect(sim.stats().webhooksSent).toBeGreaterThan(0);
      const first = JSON.parse(received[0]?.body ?? '{}');
      expect(first.eventType ?? first.data?.eventType).toBeTruthy();
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
  });
});
