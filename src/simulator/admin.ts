import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorHandle } from './handle.js';
import { writeResponse } from './http-io.js';
import { TRUTH_RESOURCES, type TruthResource } from './truth.js';
import { readBody } from './body.js';
import type { ServerClock } from './clock.js';
import { PRICING_ACTIONS, PRICING_LISTS, type PricingAction, type PricingList } from './pricing-book.js';

/**
 * `/__admin` for tests that run the daemon in a child process: the same powers as the handle.
 * No auth, no rate limit, no faults.
 */
export function createAdminHandler(handle: () => SimulatorHandle, clock: ServerClock) {
  const json = (res: ServerResponse, status: number, body: unknown) => writeResponse(res, clock, status, JSON.stringify(body));
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname.replace(/^\/__admin/, '').replace(/\/$/, '');
    const method = req.method ?? 'GET';
    const sim = handle();
    if (method === 'GET' && path === '/truth') {
      const resource = url.searchParams.get('resource') as TruthResource | null;
      if (!resource || !(TRUTH_RESOURCES as readonly string[]).includes(resource)) {
        json(res, 400, { error: `resource must be one of ${TRUTH_RESOURCES.join(', ')}` });
        return;
      }
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/x-ndjson');
      res.setHeader('Date', clock.now().toUTCString());
      let buffer = '';
      for await (const record of sim.truth(resource)) {
        buffer += `${JSON.stringify(record)}\n`;
        if (buffer.length > 64 * 1024) {
          const ok = res.write(buffer);
          buffer = '';
          if (!ok) await new Promise<void>((resolve) => res.once('drain', resolve));
          if (res.destroyed) return;
        }
      }
      res.end(buffer);
      return;
    }
    if (method === 'GET' && path === '/event-timings') {
      json(res, 200, sim.eventTimings());
      return;
    }
    if (method === 'GET' && path === '/stats') {
      json(res, 200, sim.stats());
      return;
    }
    if (method === 'POST' && path === '/reset-stats') {
      sim.resetStats();
      json(res, 200, { ok: true });
      return;
    }
    if (method === 'POST' && path === '/mutate') {
      const count = Number(url.searchParams.get('count') ?? '1');
      if (!Number.isInteger(count) || count < 0) {
        json(res, 400, { error: 'count must be a non-negative integer' });
        return;
      }
      await sim.mutate(count);
      json(res, 200, { ok: true, count });
      return;
    }
    if (method === 'POST' && path === '/pricing') {
      const list = url.searchParams.get('list') as PricingList | null;
      const action = url.searchParams.get('action') as PricingAction | null;
      const index = Number(url.searchParams.get('index') ?? '0');
      if (!list || !PRICING_LISTS.includes(list) || !action || !PRICING_ACTIONS.includes(action) || !Number.isInteger(index) || index < 0) {
        json(res, 400, { error: `list must be one of ${PRICING_LISTS.join(', ')}, action one of ${PRICING_ACTIONS.join(', ')}, index a whole number >= 0` });
        return;
      }
      json(res, 200, { ok: true, id: sim.editPricing(list, action, index) ?? null });
      return;
    }
    if (method === 'POST' && path === '/config') {
      const body = await readBody(req);
      try {
        sim.configure(body.fields);
      } catch (error) {
        json(res, 400, { error: (error as Error).message });
        return;
      }
      json(res, 200, { ok: true });
      return;
    }
    if (method === 'POST' && path === '/revoke-refresh-tokens') {
      sim.revokeRefreshTokens();
      json(res, 200, { ok: true });
      return;
    }
    if (method === 'POST' && path === '/advance') {
      const raw = url.searchParams.get('ms');
      const ms = raw === null || raw.trim() === '' ? Number.NaN : Number(raw);
      if (!Number.isInteger(ms) || ms < 0) {
        json(res, 400, { error: 'ms must be a whole number of milliseconds >= 0' });
        return;
      }
      const now = sim.advance(ms);
      json(res, 200, { ok: true, now: now.toISOString() });
      return;
    }
    if (method === 'POST' && path === '/webhooks-idle') {
      await sim.webhooksIdle();
      json(res, 200, { ok: true });
      return;
    }
    if (path === '/documents' || path === '/document-faults') {
      await documentsAdmin(sim, method, path, url, (status, body) => json(res, status, body));
      return;
    }
    if (method === 'GET' && path === '/now') {
      json(res, 200, { now: sim.now().toISOString() });
      return;
    }
    json(res, 404, { error: `no admin route ${method} ${url.pathname}` });
  };
}

/**
 * `GET /documents` (every document with its sha256), `POST /documents?reference_number=&type=[&bytes=]`
 * (a TMS user adds one; its event is sent), `DELETE /documents?reference_number=&url=` (removes
 * one), `POST /document-faults?count=N` (the next N downloads answer 503).
 */
async function documentsAdmin(sim: SimulatorHandle, method: string, path: string, url: URL, reply: (status: number, body: unknown) => void): Promise<void> {
  const param = (name: string) => url.searchParams.get(name) ?? '';
  const count = (name: string) => (url.searchParams.has(name) ? Number(param(name)) : undefined);
  try {
    if (path === '/document-faults' && method === 'POST') {
      const n = count('count') ?? 1;
      if (!Number.isInteger(n) || n < 0) return reply(400, { error: 'count must be a whole number >= 0' });
      sim.failDocumentDownloads(n);
      return reply(200, { ok: true, count: n });
    }
    if (path === '/documents' && method === 'GET') return reply(200, { documents: sim.documents() });
    if (path === '/documents' && method === 'POST') {
      const bytes = count('bytes');
      if (bytes !== undefined && (!Number.isInteger(bytes) || bytes < 0)) return reply(400, { error: 'bytes must be a whole number >= 0' });
      return reply(200, sim.addDocument(param('reference_number'), param('type'), { bytes }));
    }
    if (path === '/documents' && method === 'DELETE') {
      sim.removeDocument(param('reference_number'), param('url'));
      return reply(200, { ok: true });
    }
    reply(405, { error: `${method} is not allowed on /__admin${path}` });
  } catch (error) {
    reply((error as { status?: number }).status ?? 500, { error: (error as Error).message });
  }
}
