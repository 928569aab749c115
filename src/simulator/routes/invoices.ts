import type { CollectionQuery, Rec } from '../collection.js';
import { INVOICE_STATUSES } from '../dataset/constants.js';
import { isCombinedSummary, type InvoiceSummary } from '../dataset/invoices.js';
import { baseInvoiceEntryCount, baseInvoiceStatus, baseLoadAttrs, invoicePositionOfLoad, loadOfInvoicePosition, positionOfReference } from '../dataset/loads.js';
import { HttpError, badRequest } from '../http-error.js';
import { pageParams, rangeParams } from '../paging.js';
import { parseSortObject } from '../query-params.js';
import { API_ACTOR } from '../changes.js';
import { ambiguousWrite } from '../faults.js';
import type { RequestContext, RouteDef, RouteResult } from '../router.js';

function present(ctx: RequestContext, invoice: Rec): Rec {
  // Main returns paymentHistory only when asked for; brokerage always does.
  if (ctx.sim.options.variant === 'main' && ctx.query.boolean('includePaymentHistory') !== true) {
    const { paymentHistory: _omit, ...rest } = invoice;
    return rest;
  }
  return invoice;
}

function listInvoices(ctx: RequestContext): RouteResult {
  const { sim, query } = ctx;
  const main = sim.options.variant === 'main';
  const { skip, limit } = pageParams(query, main ? 50 : 100);
  const sort = parseSortObject('sortBy', query.object('sortBy'), ['billingDate']) ?? { field: 'billingDate', desc: true };
  const ranges = rangeParams(query, [
    ['billingFrom', 'billingDate', 'from'],
    ['billingTo', 'billingDate', 'to'],
  ]);
  if (ranges.length === 0) {
    // Known from the field: an unbounded query silently covers only the last N days.
    ranges.push({ field: 'billingDate', from: sim.clock.nowMs() - sim.options.unboundedInvoiceQueryDays * 86_400_000 });
  }
  const statuses = query.array('status');
  for (const s of statuses ?? []) if (!(INVOICE_STATUSES as readonly string[]).includes(s)) throw badRequest(`status ${s} is not an invoice status`);
  const numbers = query.array('invoiceNumbers');
  const types = query.array('type_of_load');
  const omitMulti = sim.options.invoiceListOmitsMultiChargeSet;
  const data = sim.store.ctx;
  // Kinds (spec §4.2): sub-customer invoices only with isSubCustomer (and then only those),
  // combined ones only with isShowCombinedInvoices, voided ones only with isIncludeDeleted (or
  // isDeleted: voided only). Base invoices are all primary and live.
  const subOnly = query.boolean('isSubCustomer') === true;
  const withCombined = query.boolean('isShowCombinedInvoices') === true;
  const deletedOnly = query.boolean('isDeleted') === true;
  const withDeleted = deletedOnly || query.boolean('isIncludeDeleted') === true;
  const subIds = sim.store.subCustomerInvoiceIds;

  const overlayPredicate = (invoice: InvoiceSummary): boolean => {
    const combined = isCombinedSummary(invoice);
    if (subIds.has(invoice.id) !== subOnly) return false;
    if (combined && !withCombined) return false;
    if (invoice.deleted ? !withDeleted : deletedOnly) return false;
    // The field omission concerns one load's several charge sets, not combined invoices.
    if (omitMulti && invoice.total > 1 && !combined) return false;
    if (statuses?.length && !statuses.includes(invoice.status)) return false;
    if (types?.length && !types.includes(invoice.type_of_load)) return false;
    if (numbers?.length && !numbers.some((n) => invoice.entryReferences.includes(n) || invoice.loadReferences.includes(n) || n === invoice.loadReference)) return false;
    return true;
  };
  const hasBaseFilter = omitMulti || Boolean(statuses?.length || types?.length);
  const q: CollectionQuery<InvoiceSummary> = { sortField: 'billingDate', desc: sort.desc, ranges, skip, limit, overlayPredicate, baseNone: subOnly || deletedOnly };
  if (hasBaseFilter) {
    q.basePredicate = (j) => {
      const p = loadOfInvoicePosition(j);
      if (omitMulti && baseInvoiceEntryCount(data, p) > 1) return false;
      if (statuses?.length && !statuses.includes(baseInvoiceStatus(data, p))) return false;
      if (types?.length && !types.includes(baseLoadAttrs(data, p).type_of_load)) return false;
      return true;
    };
    q.baseFilterKey = `invoices:${JSON.stringify([omitMulti, statuses, types])}`;
  }
  if (numbers?.length) {
    q.baseCandidates = numbers
      .map((n) => positionOfReference(data, n.replace(/_\d+$/, '')))
      .filter((p): p is number => p !== undefined && p < sim.store.loads.baseCount)
      .map((p) => invoicePositionOfLoad(p))
      .filter((j): j is number => j !== undefined && j < sim.store.invoices.baseCount);
  }
  const result = sim.store.invoices.query(q);
  return { data: result.items.map((i) => present(ctx, i)), count: result.total };
}

function getInvoice(ctx: RequestContext): RouteResult {
  const ref = ctx.params['ref'] as string;
  const p = ctx.sim.store.loadPositionByRef(ref);
  if (p === undefined) throw new HttpError(404, `load ${ref} not found`);
  // The load's primary (or combined) invoice; a voided one is gone (sub-customer ones are list-only).
  const j = ctx.sim.store.liveInvoicePositionOfLoad(p);
  const invoice = j === undefined ? undefined : ctx.sim.store.invoices.get(j);
  if (!invoice) throw new HttpError(404, `load ${ref} has no invoice`);
  return { data: present(ctx, invoice), count: 1 };
}

/**
 * The load of a charge set: by number (`<ref>` or `<ref>_<n>`) or by id (`<load _id><n>`, as
 * `includeChargeSets` presents them).
 */
function loadOfCharge(ctx: RequestContext, value: unknown, byId: boolean): number {
  if (typeof value !== 'string' || value === '') throw badRequest(`${byId ? 'chargeIds' : 'chargeReferenceNumbers'} must hold strings`);
  const p = byId ? ctx.sim.store.loadPositionById(value.slice(0, 24)) : ctx.sim.store.loadPositionByRef(value.replace(/_\d+$/, ''));
  if (p === undefined) throw badRequest(`charge set ${value} not found`);
  if (ctx.sim.store.loads.get(p)?.['isDeleted'] === true) throw badRequest(`charge set ${value} belongs to a removed load`);
  return p;
}

/**
 * Invoices the loads of the given charge sets (status BILLING, `invoice#created`). A charge set
 * already on a live invoice is refused, as a billing system would; the answer's `data` is empty (§4.2).
 */
async function createInvoices(ctx: RequestContext): Promise<RouteResult> {
  const body = (await ctx.body()).fields;
  const ids = body['chargeIds'];
  const refs = body['chargeReferenceNumbers'];
  if (ids !== undefined && !Array.isArray(ids)) throw badRequest('chargeIds must be an array');
  if (refs !== undefined && !Array.isArray(refs)) throw badRequest('chargeReferenceNumbers must be an array');
  if (!(Array.isArray(ids) && ids.length) && !(Array.isArray(refs) && refs.length)) throw badRequest('chargeIds or chargeReferenceNumbers is required');
  const loads = new Set<number>();
  for (const id of (ids as unknown[] | undefined) ?? []) loads.add(loadOfCharge(ctx, id, true));
  for (const ref of (refs as unknown[] | undefined) ?? []) loads.add(loadOfCharge(ctx, ref, false));
  for (const p of loads) {
    if (ctx.sim.store.liveInvoicePositionOfLoad(p) !== undefined) throw badRequest(`load ${String(ctx.sim.store.loads.get(p)?.['reference_number'])} is already invoiced`);
  }
  const now = ctx.sim.clock.iso();
  for (const p of loads) {
    ctx.sim.changes.updateLoad(p, { status: 'BILLING' }, API_ACTOR, now);
    ctx.sim.changes.ensureInvoice(p, now);
  }
  ctx.sim.stats.invoicesCreated += loads.size;
  return { data: {}, ambiguous: ambiguousWrite(ctx.sim) };
}

export const invoiceRoutes: RouteDef[] = [
  { method: 'GET', pattern: '/invoices', auth: 'access', handler: listInvoices },
  { method: 'GET', pattern: '/invoices/:ref', auth: 'access', handler: getInvoice },
  { method: 'POST', pattern: '/invoices', auth: 'access', variants: ['main'], handler: createInvoices },
];
