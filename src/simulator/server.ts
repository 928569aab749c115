import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, type ParsedBody } from './body.js';
import { bearerOf } from './auth.js';
import { errorEnvelope, okEnvelope } from './envelope.js';
import { reshapeResponse } from './real-shapes.js';
import type { FaultKind } from './options.js';
import { HTML_ERROR_PAGE } from './faults.js';
import { HttpError } from './http-error.js';
import { delay, writeResponse, writeTruncated } from './http-io.js';
import { QueryParams } from './query-params.js';
import { retryAfterValue } from './rate-limiter.js';
import type { RequestContext, Router } from './router.js';
import type { SimContext } from './sim-context.js';
import { countRoute } from './stats.js';

export const API_PREFIX = '/v1';
export const ADMIN_PREFIX = '/__admin';

type AdminHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/**
 * The request pipeline of the public API: latency → rate limit → fault → auth → route → answer.
 * Admin routes bypass all of it (no auth, no limit, no faults).
 */
export function createRequestHandler(sim: SimContext, router: Router, admin: AdminHandler) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === ADMIN_PREFIX || url.pathname.startsWith(`${ADMIN_PREFIX}/`)) {
      try {
        await admin(req, res, url);
      } catch (error) {
        writeResponse(res, sim.clock, 500, JSON.stringify({ error: (error as Error).message }));
      }
      return;
    }
    await handleApi(sim, router, req, res, url);
  };
}

async function handleApi(sim: SimContext, router: Router, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const self = url.pathname;
  const method = (req.method ?? 'GET').toUpperCase();
  sim.stats.requests++;
  let routeKey = `${method} ?`;
  const answer = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    countRoute(sim.stats, routeKey, status);
    writeResponse(res, sim.clock, status, JSON.stringify(body), headers);
  };
  const fail = (status: number, message: string, headers: Record<string, string> = {}) =>
    answer(status, errorEnvelope(routeKey, self, status, message), headers);

  await delay(sim.options.pageDelayMs);

  if (!self.startsWith(`${API_PREFIX}/`)) {
    routeKey = `${method} (unknown)`;
    fail(404, `no API at ${self}; the base path is ${API_PREFIX}`);
    return;
  }
  const match = router.match(method, self.slice(API_PREFIX.length));
  if (match.kind === 'not-found') {
    routeKey = `${method} (unknown)`;
    fail(404, `the API ${method} ${self} was not found`);
    return;
  }
  routeKey = match.key;
  if (match.kind === 'method-not-allowed') {
    fail(405, `method ${method} is not allowed for ${self}`);
    return;
  }

  const waitMs = sim.limiter.take();
  if (waitMs > 0) {
    sim.stats.rateLimited++;
    fail(429, 'too many requests', { 'Retry-After': retryAfterValue(waitMs, sim.options.retryAfterFormat, sim.clock.nowMs()) });
    return;
  }

  const accept = req.headers.accept;
  if (accept && !/json|\*\/\*|application\/\*/i.test(accept)) {
    fail(406, 'only application/json responses are available');
    return;
  }

  const fault = sim.faults.roll(match.def.pattern === '/retrieve-token');
  if (fault) sim.stats.faults[fault] = (sim.stats.faults[fault] ?? 0) + 1;
  if (fault && (await applyEarlyFault(sim, fault, req, res, routeKey, self))) return;

  let parsed: Promise<ParsedBody> | undefined;
  const ctx: RequestContext = {
    sim,
    req,
    route: routeKey,
    self,
    params: match.params,
    query: new QueryParams(url.search),
    body: () => (parsed ??= readBody(req).then((body) => checkEncoding(sim, body))),
  };
  let status = 200;
  let body: Record<string, unknown>;
  let ambiguous = false;
  try {
    if (match.def.auth === 'access') sim.auth.requireAccess(bearerOf(req.headers.authorization));
    const result = await match.def.handler(ctx);
    status = result.status ?? 200;
    ambiguous = result.ambiguous === true;
    const data = sim.options.realShapes ? reshapeResponse(routeKey, result.data) : result.data;
    body = okEnvelope(routeKey, self, data, { ...(result.count !== undefined ? { count: result.count } : {}), ...(result.other ? { other: result.other } : {}) });
  } catch (error) {
    if (error instanceof HttpError) {
      status = error.status;
      body = errorEnvelope(routeKey, self, status, error.message);
    } else {
      status = 500;
      body = errorEnvelope(routeKey, self, 500, `internal error: ${(error as Error).message}`);
    }
  }
  // Drain an unread body so keep-alive connections stay usable.
  if (!parsed && !req.readableEnded) req.resume();

  if (ambiguous) {
    // The load exists now; the client is told nothing useful about it.
    sim.stats.ambiguousCreates++;
    if (sim.faults.coin(0.5)) {
      countRoute(sim.stats, routeKey, 'drop');
      req.socket.destroy();
    } else {
      fail(502, 'bad gateway');
    }
    return;
  }
  if (fault === 'truncated' && status === 200) {
    // A rotation done and its answer cut: the new pair is lost to the client (spec §5.6), which
    // the stats tell apart from a client that forgot a pair it had.
    const rotated = (body['data'] as Record<string, unknown> | undefined)?.['refresh_token'];
    if (match.def.pattern === '/generate-new-token' && typeof rotated === 'string') {
      sim.auth.answerCutByFault(rotated);
      sim.stats.rotationAnswersCut++;
    }
    const text = JSON.stringify(body);
    const { cutAt, honestLength } = sim.faults.truncation(Buffer.byteLength(text));
    countRoute(sim.stats, routeKey, 'truncated');
    writeTruncated(res, sim.clock, text, cutAt, honestLength);
    return;
  }
  answer(status, body);
}

/** Strict mode: a brokerage body that is not multipart/form-data is refused as §5.2 would have it. */
function checkEncoding(sim: SimContext, body: ParsedBody): ParsedBody {
  if (!sim.options.strictEncoding || sim.options.variant !== 'brokerage' || body.kind === 'empty') return body;
  if (body.mediaType === 'multipart/form-data') return body;
  throw new HttpError(415, `request bodies must be multipart/form-data on this server (spec §5.2), not ${body.mediaType || 'a body without Content-Type'}`);
}

/** Faults that replace the answer entirely. Returns true when the request is finished. */
async function applyEarlyFault(
  sim: SimContext,
  fault: FaultKind,
  req: IncomingMessage,
  res: ServerResponse,
  routeKey: string,
  self: string,
): Promise<boolean> {
  switch (fault) {
    case 'drop':
      countRoute(sim.stats, routeKey, 'drop');
      req.socket.destroy();
      return true;
    case 'slow':
      await delay(sim.options.faults.slowMs);
      return false;
    case 'html':
      countRoute(sim.stats, routeKey, 502);
      req.resume();
      writeResponse(res, sim.clock, 502, HTML_ERROR_PAGE, {}, 'text/html; charset=utf-8');
      return true;
    case '500':
    case '502':
    case '503': {
      const status = Number(fault);
      countRoute(sim.stats, routeKey, status);
      req.resume();
      const message = status === 500 ? 'server problem; retry later' : 'service temporarily offline for maintenance; retry later';
      writeResponse(res, sim.clock, status, JSON.stringify(errorEnvelope(routeKey, self, status, message)));
      return true;
    }
    case 'truncated':
      return false;
  }
  return false;
}

