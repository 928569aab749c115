import type { AuditLog } from '../audits.js';
import { CHARGE_CODES } from '../dataset/constants.js';
import { presentEvent } from '../events.js';
import { HttpError, badRequest } from '../http-error.js';
import { COLLECTION_CODES, makeId } from '../ids.js';
import { pageParams } from '../paging.js';
import { parseSortObject } from '../query-params.js';
import type { RequestContext, RouteDef, RouteResult } from '../router.js';

function encodeToken(after: { t: number; id: string }, from: number, to: number): string {
  return Buffer.from(JSON.stringify({ a: after.t, i: after.id, f: from, u: to })).toString('base64url');
}

function decodeToken(token: string): { t: number; id: string; f: number; u: number } {
  try {
    const raw = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof raw['a'] === 'number' && typeof raw['i'] === 'string' && typeof raw['f'] === 'number' && typeof raw['u'] === 'number') {
      return { t: raw['a'], id: raw['i'], f: raw['f'], u: raw['u'] };
    }
  } catch {
    // fall through
  }
  throw badRequest('pageToken is invalid');
}

function listAudits(pick: (ctx: RequestContext) => AuditLog) {
  return (ctx: RequestContext): RouteResult => {
    const q = ctx.query;
    const from = q.date('createdAtFrom');
    const to = q.date('createdAtTo', true);
    if (from === undefined) throw badRequest('createdAtFrom is required');
    if (to === undefined) throw badRequest('createdAtTo is required');
    const limit = q.integer('limit');
    if (limit !== undefined && (limit < 1 || limit > 50)) throw badRequest('limit must be between 1 and 50');
    const tokenText = q.string('pageToken');
    const token = tokenText ? decodeToken(tokenText) : undefined;
    if (token && (token.f !== from || token.u !== to)) throw badRequest('pageToken does not belong to this createdAtFrom/createdAtTo window');
    const action = q.string('action');
    const entityId = q.string('entityId');
    const actorIds = q.array('actorIds');
    const result = pick(ctx).query({
      fromMs: from,
      toMs: to,
      limit: limit ?? 50,
      ...(action ? { action } : {}),
      ...(entityId ? { entityId } : {}),
      ...(actorIds ? { actorIds } : {}),
      ...(token ? { after: { t: token.t, id: token.id } } : {}),
    });
    // An empty string marks the last page; clients must stop on it rather than loop.
    return { data: result.items, other: { pageToken: result.next ? encodeToken(result.next, from, to) : '' } };
  };
}

function listWebhookEvents(ctx: RequestContext): RouteResult {
  const q = ctx.query;
  const main = ctx.sim.options.variant === 'main';
  const types = q.array('type');
  const from = q.date('occurred_from');
  const to = q.date('occurred_to', true);
  const sort = main ? parseSortObject('sortBy', q.object('sortBy'), ['createdAt']) : undefined;
  const { skip, limit } = main ? pageParams(q, 50) : { skip: 0, limit: Number.MAX_SAFE_INTEGER };
  const matches = ctx.sim.store.events.records.filter((r) => {
    const ms = Date.parse(r.createdAt);
    if (from !== undefined && ms < from) return false;
    if (to !== undefined && ms > to) return false;
    if (types?.length && !types.includes(r.eventType.split('#')[0] ?? '') && !types.includes(r.eventType)) return false;
    return true;
  });
  // Log order is creation order; ids grow with it, so reversing gives createdAt descending.
  if (sort?.desc) matches.reverse();
  return { data: matches.slice(skip, skip + limit).map(presentEvent) };
}

function getWebhookEvent(ctx: RequestContext): RouteResult {
  const raw = ctx.params['id'] as string;
  const record = /^\d+$/.test(raw) ? ctx.sim.store.events.get(Number(raw)) : undefined;
  if (!record) throw new HttpError(404, `webhook event ${raw} not found`);
  return { data: presentEvent(record) };
}

function chargeCodes(ctx: RequestContext): RouteResult {
  const seed = ctx.sim.options.seed;
  return {
    data: CHARGE_CODES.map(([name, value, description], i) => ({
      _id: makeId(COLLECTION_CODES.chargeCodes, seed, i),
      name,
      value,
      description,
      isActive: i !== 9,
      ...(i % 3 === 0 ? { isAccountsPayable: true } : {}),
      ...(i % 2 === 0 ? { isAccountsReceivable: true } : {}),
    })),
  };
}

export const auditWebhookRoutes: RouteDef[] = [
  { method: 'GET', pattern: '/audit/load', auth: 'access', variants: ['main'], handler: listAudits((ctx) => ctx.sim.store.loadAudits) },
  { method: 'GET', pattern: '/audit/customer', auth: 'access', variants: ['main'], handler: listAudits((ctx) => ctx.sim.store.customerAudits) },
  { method: 'GET', pattern: '/webhook', auth: 'access', handler: listWebhookEvents },
  { method: 'GET', pattern: '/webhook/:id', auth: 'access', handler: getWebhookEvent },
  { method: 'GET', pattern: '/get-charge-codes', auth: 'access', variants: ['main'], handler: chargeCodes },
];
