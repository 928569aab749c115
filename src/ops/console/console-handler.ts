import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ConsoleConfig } from '../../config/types.js';
import type { Logger } from '../../util/logger.js';
import { describeError } from '../../util/errors.js';
import { readRawBody } from '../../webhooks/read-body.js';
import type { RouteHandler } from '../http-servers.js';
import { outboxPage, rejectedPage, webhooksPage } from './admin-pages.js';
import { CONSOLE_ASSETS } from './assets.js';
import { challenges, isAuthorized } from './console-auth.js';
import type { ConsoleActionKind, ConsoleActionResult, ConsoleData } from './console-data.js';
import { CsrfGuard } from './csrf.js';
import { html, type SafeHtml } from './html.js';
import { CONSOLE_PREFIX, layout, type PageContext } from './layout.js';
import { overviewPage, runsPage, streamPage } from './stream-pages.js';

/** Sent with every console response: no inline script or style runs, no framing, nothing cached. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

const ACTIONS: readonly ConsoleActionKind[] = ['outbox-retry', 'outbox-cancel', 'rejected-retry', 'rejected-discard'];

/** The form of every action; `back` may only lead to a console page (no open redirect). */
const actionForm = z.object({
  id: z.coerce.number().int().positive(),
  csrf: z.string().optional(),
  back: z
    .string()
    .regex(/^\/console\/[A-Za-z0-9/_.-]*$/)
    .optional(),
});

const MAX_FORM_BYTES = 8 * 1024;
/** Outcomes waiting to be shown on the page an action redirects to (post/redirect/get). */
const MAX_FLASHES = 200;

export interface ConsoleHandlerDeps {
  config: ConsoleConfig;
  data: ConsoleData;
  logger: Logger;
  /** Aborted on shutdown: an action in progress (a retry delivering to a sink) stops with it. */
  signal: AbortSignal;
}

/**
 * Everything under `/console/`: authentication first (401 with a challenge), then the pages (GET)
 * and the actions (POST only, CSRF-checked, answered with a redirect so a reload never repeats
 * them). Every page is rendered on the server from the state the CLI reads; nothing is fetched
 * from elsewhere and no script runs.
 */
export function consoleHandler(deps: ConsoleHandlerDeps): RouteHandler {
  const { config, data, logger } = deps;
  const auth = config.auth;
  if (!auth) throw new Error('http.console.auth is required when the console is enabled');
  const csrf = new CsrfGuard(config.publicUrl === undefined ? undefined : new URL(config.publicUrl).origin);
  const flashes = new Map<string, ConsoleActionResult>();

  const sendHtml = (res: ServerResponse, status: number, page: SafeHtml) => {
    const body = page.text;
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  const sendText = (res: ServerResponse, status: number, text: string, headers: Record<string, string | string[]> = {}) => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const takeFlash = (url: URL) => {
    const key = url.searchParams.get('flash');
    if (!key) return undefined;
    const flash = flashes.get(key);
    flashes.delete(key);
    return flash;
  };

  const page = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const ctx: PageContext = { csrfToken: csrf.tokenFor(req), path: url.pathname };
    const flash = takeFlash(url);
    if (flash) ctx.flash = flash;
    const now = new Date().toISOString();
    const path = url.pathname;
    if (path === CONSOLE_PREFIX) return sendHtml(res, 200, overviewPage(await data.overview(), ctx));
    if (path === '/console/outbox') return sendHtml(res, 200, outboxPage(await data.outbox(), ctx, now));
    if (path === '/console/rejected') return sendHtml(res, 200, rejectedPage(await data.rejected(), ctx, now));
    if (path === '/console/webhooks') return sendHtml(res, 200, webhooksPage(await data.webhooks(), ctx, now));
    if (path === '/console/runs') {
      const failedOnly = url.searchParams.get('failed') === '1';
      return sendHtml(res, 200, runsPage(await data.runs({ failedOnly }), failedOnly, ctx, now));
    }
    const stream = /^\/console\/streams\/([^/]+)$/.exec(path);
    const name = stream ? safeDecode(stream[1]!) : undefined;
    if (name !== undefined) {
      const detail = await data.stream(name);
      if (detail) return sendHtml(res, 200, streamPage(detail, ctx));
    }
    sendHtml(res, 404, layout('Not found', ctx, html`<p>There is no console page at ${path}.</p>`, now));
  };

  const action = async (req: IncomingMessage, res: ServerResponse, kind: ConsoleActionKind) => {
    let raw: Buffer;
    try {
      raw = await readRawBody(req, MAX_FORM_BYTES);
    } catch {
      return sendText(res, 413, `the form is over ${MAX_FORM_BYTES} bytes`);
    }
    const fields = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
    const refusal = csrf.refusal(req, fields['csrf']);
    if (refusal) {
      logger.warn({ action: kind, origin: req.headers.origin, secFetchSite: req.headers['sec-fetch-site'] }, `console action refused: ${refusal}`);
      return sendText(res, 403, refusal);
    }
    const form = actionForm.safeParse(fields);
    if (!form.success) return sendText(res, 400, `bad form: ${form.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    let result: ConsoleActionResult;
    try {
      result = await data.act(kind, form.data.id, deps.signal);
    } catch (error) {
      result = { ok: false, message: describeError(error) };
    }
    logger.info({ action: kind, id: form.data.id, ok: result.ok }, `console: ${result.message}`);
    const key = randomBytes(12).toString('base64url');
    flashes.set(key, result);
    // Oldest first out: a flash nobody came back for does not stay forever.
    while (flashes.size > MAX_FLASHES) flashes.delete(flashes.keys().next().value!);
    const back = form.data.back ?? CONSOLE_PREFIX;
    res.writeHead(303, { ...SECURITY_HEADERS, Location: `${back}?flash=${key}`, 'Content-Length': 0 });
    res.end();
  };

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    if (!isAuthorized(req, auth)) {
      req.resume();
      return sendText(res, 401, 'authentication required', { 'WWW-Authenticate': challenges(auth) });
    }
    const actionMatch = /^\/console\/actions\/([a-z-]+)$/.exec(url.pathname);
    if (actionMatch) {
      const kind = ACTIONS.find((a) => a === actionMatch[1]);
      if (!kind) return sendText(res, 404, `no console action ${actionMatch[1]}`);
      // Actions change state: never on GET, so a link or an image cannot trigger one.
      if (req.method !== 'POST') return sendText(res, 405, 'console actions are POST forms', { Allow: 'POST' });
      return action(req, res, kind);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      req.resume();
      return sendText(res, 405, 'console pages are read with GET', { Allow: 'GET, HEAD' });
    }
    if (url.pathname === '/console') {
      res.writeHead(301, { ...SECURITY_HEADERS, Location: CONSOLE_PREFIX, 'Content-Length': 0 });
      res.end();
      return;
    }
    const asset = CONSOLE_ASSETS.get(url.pathname);
    if (asset) {
      res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': asset.type, 'Content-Length': Buffer.byteLength(asset.body), 'Cache-Control': 'private, max-age=3600' });
      res.end(asset.body);
      return;
    }
    return page(req, res, url);
  };
}

/** A path segment decoded, or undefined when it is not valid percent-encoding (answered 404). */
function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
