import type { CollectionQuery, Rec } from '../collection.js';
import { pageParams, rangeParams, MAIN_DATETIME_RANGES } from '../paging.js';
import type { RequestContext, RouteDef, RouteResult } from '../router.js';

/**
 * Bills and support moves have no sortBy: their order is updatedAt descending, so a record updated
 * while a client pages jumps to the front and shifts every offset behind it (design §2.1).
 */
function listFixedOrder(
  ctx: RequestContext,
  collection: 'bills' | 'supportMoves',
  predicate: ((record: Rec) => boolean) | undefined,
  filterKey: string,
  present: (record: Rec) => Rec,
): RouteResult {
  const { sim, query } = ctx;
  const { skip, limit } = pageParams(query, 50);
  const ranges = rangeParams(query, MAIN_DATETIME_RANGES);
  const target = sim.store[collection];
  const q: CollectionQuery<Rec> = { sortField: 'updatedAt', desc: true, ranges, skip, limit };
  if (predicate) {
    q.overlayPredicate = predicate;
    q.basePredicate = (p) => predicate(target.generated(p));
    q.baseFilterKey = `${collection}:${filterKey}`;
  }
  const result = target.query(q);
  return { data: result.items.map(present), count: result.total };
}

function listBills(ctx: RequestContext): RouteResult {
  const billNumber = ctx.query.string('billNumber');
  const billId = ctx.query.string('billId');
  const predicate = billNumber || billId
    ? (r: Rec) => (!billNumber || r['billNumber'] === billNumber || String(r['billNumber']).replace(/^BILL-0*/, '') === billNumber) && (!billId || r['billId'] === billId)
    : undefined;
  return listFixedOrder(ctx, 'bills', predicate, JSON.stringify([billNumber, billId]), (r) => r);
}

function listSupportMoves(ctx: RequestContext): RouteResult {
  const q = ctx.query;
  const filters = {
    referenceNumbers: q.array('referenceNumbers'),
    supportMoveNumbers: q.array('supportMoveNumbers'),
    loadIds: q.array('loadIds'),
    moveIds: q.array('moveIds'),
    driverIds: q.array('driverIds'),
    branchIds: q.array('branchIds'),
  };
  const active = Object.values(filters).some((v) => v && v.length > 0);
  const predicate = active
    ? (r: Rec) => {
        const order = (r['driverOrder'] as Rec[]) ?? [];
        const has = (values: string[] | undefined, actual: unknown[]) => !values?.length || values.some((v) => actual.includes(v));
        return (
          has(filters.referenceNumbers, order.map((o) => o['referenceNumber'])) &&
          has(filters.supportMoveNumbers, [r['supportMoveNumber']]) &&
          has(filters.loadIds, [r['loadId']]) &&
          has(filters.moveIds, order.map((o) => o['moveId'])) &&
          has(filters.driverIds, [(r['driver'] as Rec)?.['driverId']]) &&
          has(filters.branchIds, [r['branch']])
        );
      }
    : undefined;
  const withPay = q.boolean('includeDriverPay') === true;
  return listFixedOrder(ctx, 'supportMoves', predicate, JSON.stringify(filters), (r) => {
    if (withPay) return r;
    const { driverPay: _omit, ...rest } = r;
    return rest;
  });
}

export const billRoutes: RouteDef[] = [
  { method: 'GET', pattern: '/bills', auth: 'access', variants: ['main'], handler: listBills },
  { method: 'GET', pattern: '/support-move', auth: 'access', variants: ['main'], handler: listSupportMoves },
];
