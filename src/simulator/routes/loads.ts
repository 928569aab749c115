import type { CollectionQuery } from '../collection.js';
import { API_ACTOR } from '../changes.js';
import { UPLOAD_DOCUMENT_TYPES } from '../../api/spec-enums.js';
import { LOAD_FLOW, BROKERAGE_STATUS_NAMES, LISTED_DOCUMENT_TYPES } from '../dataset/constants.js';
import { embedCustomer } from '../dataset/customers.js';
import {
  baseInvoiceEntryCount,
  baseLoadAttrs,
  chargeSetsOf,
  isBilledBase,
  positionOfReference,
  positionsForTerm,
  positionsOfContainer,
  vendorPayOf,
  type Load,
  type LoadAttrs,
  type LoadSummary,
} from '../dataset/loads.js';
import { HttpError, badRequest } from '../http-error.js';
import { attachLoadDocument } from '../load-documents.js';
import { validateCreateLoad, validateUpdateLoad } from '../load-validation.js';
import { MAIN_DATETIME_RANGES, pageParams, rangeParams } from '../paging.js';
import { parseSortObject } from '../query-params.js';
import { ambiguousWrite } from '../faults.js';
import type { RequestContext, RouteDef, RouteResult } from '../router.js';
import type { SimContext } from '../sim-context.js';

export function presentLoad(sim: SimContext, p: number, load: Load, opts: { chargeSets?: boolean; vendorPay?: boolean }): Load {
  if (sim.options.variant !== 'main' || (!opts.chargeSets && !opts.vendorPay)) return load;
  const out: Load = { ...load };
  if (opts.chargeSets) {
    const j = sim.store.invoicePositionOfLoad(p);
    const entries = j !== undefined ? Number(sim.store.invoices.get(j)?.['total'] ?? 1) : p < sim.store.loads.baseCount && isBilledBase(p) ? baseInvoiceEntryCount(sim.store.ctx, p) : 1;
    out['chargeSets'] = chargeSetsOf(load, entries);
  }
  if (opts.vendorPay) out['vendorPay'] = vendorPayOf(load);
  return out;
}

function listLoads(ctx: RequestContext): RouteResult {
  const { sim, query } = ctx;
  const main = sim.options.variant === 'main';
  const { skip, limit } = pageParams(query, main ? 50 : 100);
  let sortField = 'createdAt';
  let desc = true;
  if (main) {
    const sort = parseSortObject('sortBy', query.object('sortBy'), ['updatedAt', 'createdAt']);
    if (sort) ({ field: sortField, desc } = sort);
  } else {
    // Brokerage: the string asc/desc (§4.4.3), which names no field: the simulator sorts on
    // createdAt, so clients must not assume an updatedAt order.
    const sort = query.has('sortBy') ? query.string('sortBy') : undefined;
    if (sort !== undefined && sort !== 'asc' && sort !== 'desc') throw badRequest('sortBy must be asc or desc');
    desc = sort !== 'asc';
  }
  // §4.4.3 lists these under "Dates" and the datetimes as main-only: brokerage matches whole UTC
  // days and ignores `updatedAtFrom` & co. as a real server does with unknown parameters.
  const ranges = rangeParams(
    query,
    [
      ...(main ? MAIN_DATETIME_RANGES : []),
      ['createdFromDate', 'createdAt', 'from'],
      ['createdToDate', 'createdAt', 'to'],
      ['updatedFrom', 'updatedAt', 'from'],
      ['updatedTo', 'updatedAt', 'to'],
    ],
    { days: !main },
  );
  const isDeleted = query.boolean('isDeleted');
  const includeDeleted = query.boolean('isIncludeDeleted') === true;
  const statuses = query.array('status');
  const types = query.array('type_of_load');
  const callers = query.array('caller');
  const hazmat = query.boolean('hazmat');
  const isHot = query.boolean('isHot');
  const refs = query.array('reference_numbers');
  const containerNo = query.string('containerNo');
  const searchTerm = query.string('searchTerm');

  const attrFilter = (a: LoadAttrs): boolean =>
    (!statuses || statuses.length === 0 || statuses.includes(a.status)) &&
    (!types || types.length === 0 || types.includes(a.type_of_load)) &&
    (!callers || callers.length === 0 || callers.includes(a.callerId)) &&
    (hazmat === undefined || a.hazmat === hazmat) &&
    (isHot === undefined || a.isHot === isHot);
  const hasAttrFilter = Boolean(statuses?.length || types?.length || callers?.length) || hazmat !== undefined || isHot !== undefined;

  // Key lookups: invert the generator for base loads, match the overlay by value.
  let candidates: number[] | undefined;
  const intersect = (found: number[]) => {
    candidates = candidates === undefined ? found : candidates.filter((p) => found.includes(p));
  };
  const ctxData = sim.store.ctx;
  if (refs && refs.length > 0) intersect(refs.map((r) => positionOfReference(ctxData, r)).filter((p): p is number => p !== undefined));
  if (containerNo) intersect(positionsOfContainer(ctxData, containerNo));
  if (searchTerm) intersect(positionsForTerm(ctxData, searchTerm));
  const term = searchTerm?.toLowerCase();
  const keyFilter = (load: LoadSummary): boolean =>
    (!refs || refs.length === 0 || refs.includes(load.reference_number)) &&
    (!containerNo || load.containerNo.toUpperCase() === containerNo.toUpperCase()) &&
    (!term || [load.reference_number, load.containerNo, load.secondaryReferenceNo, load.purchaseOrderNo].some((v) => v.toLowerCase().includes(term)));

  const hasKeyFilter = Boolean(refs?.length || containerNo || term);
  // Predicates are built only from what was asked: the overlay is checked on every page.
  const overlayPredicate =
    isDeleted === true
      ? (load: LoadSummary) => load.isDeleted && (!hasAttrFilter || attrFilter(load)) && (!hasKeyFilter || keyFilter(load))
      : includeDeleted
        ? (load: LoadSummary) => (!hasAttrFilter || attrFilter(load)) && (!hasKeyFilter || keyFilter(load))
        : (load: LoadSummary) => !load.isDeleted && (!hasAttrFilter || attrFilter(load)) && (!hasKeyFilter || keyFilter(load));
  const q: CollectionQuery<LoadSummary> = { sortField, desc, ranges, skip, limit, baseNone: isDeleted === true, overlayPredicate };
  if (candidates) q.baseCandidates = candidates;
  if (hasAttrFilter) {
    q.basePredicate = (p) => attrFilter(baseLoadAttrs(ctxData, p));
    q.baseFilterKey = `loads:${JSON.stringify([statuses, types, callers, hazmat, isHot])}`;
  }
  const result = sim.store.loads.query(q);
  const opts = { chargeSets: query.boolean('includeChargeSets') === true, vendorPay: query.boolean('includeVendorPay') === true };
  const data = result.items.map((load) => presentLoad(sim, sim.store.loadPositionById(String(load['_id'])) ?? 0, load, opts));
  // The loads list carries no `count` (§2.1): clients page until a short page.
  return { data };
}

function loadByRef(ctx: RequestContext, ref: string): { p: number; load: Load } {
  const p = ctx.sim.store.loadPositionByRef(ref);
  if (p === undefined) throw new HttpError(404, `load ${ref} not found`);
  const load = ctx.sim.store.loads.get(p) as Load;
  if (load['isDeleted'] === true) throw new HttpError(410, `load ${ref} has been removed`);
  return { p, load };
}

function getLoad(ctx: RequestContext): RouteResult {
  const { p, load } = loadByRef(ctx, ctx.params['ref'] as string);
  const opts = { chargeSets: ctx.query.boolean('includeChargeSets') === true, vendorPay: ctx.query.boolean('includeVendorPay') === true };
  return { data: presentLoad(ctx.sim, p, load, opts) };
}

/** Turns request ids into the embedded shapes a stored load has. */
function toStoredFields(sim: SimContext, body: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...body };
  const store = sim.store;
  const customerRecord = (id: string) => {
    const cp = store.customerPositionById('customers', id);
    if (cp !== undefined) return store.customers.get(cp);
    const np = store.customerPositionById('consignees', id);
    return np !== undefined ? store.consignees.get(np) : undefined;
  };
  if (typeof body['caller'] === 'string') {
    const caller = customerRecord(body['caller']);
    if (caller) {
      fields['caller'] = embedCustomer(caller);
      fields['callerName'] = caller['company_name'];
    }
  }
  for (const [key, nameField] of [['shipper', 'shipperName'], ['consignee', 'consigneeName']] as const) {
    const ids = body[key];
    if (Array.isArray(ids) && typeof ids[0] === 'string') {
      const first = customerRecord(ids[0]);
      if (first) fields[nameField] = first['company_name'];
    }
  }
  if (typeof body['vessel'] === 'string') fields['vessel'] = { eta: body['vessel'] };
  if (sim.options.variant === 'main') {
    for (const f of ['freight', 'custom']) if (typeof body[f] === 'boolean') fields[f] = body[f] ? 'HOLD' : 'RELEASED';
  } else if (typeof body['terminal'] === 'string') {
    fields['terminal'] = { _id: body['terminal'], name: `Terminal ${body['terminal'].slice(-4)}` };
  }
  if (typeof body['hot'] === 'boolean') fields['isHot'] = body['hot'];
  if (typeof body['isHot'] === 'boolean') fields['hot'] = body['isHot'];
  return fields;
}

async function createLoad(ctx: RequestContext): Promise<RouteResult> {
  const { sim } = ctx;
  const body = (await ctx.body()).fields;
  validateCreateLoad(
    body,
    sim.options.variant,
    (id) => sim.store.customerPositionById('customers', id) !== undefined,
    (id) => sim.store.customerPositionById('consignees', id) !== undefined,
  );
  const { load } = sim.changes.createLoad(toStoredFields(sim, body), API_ACTOR);
  return { data: load, ambiguous: ambiguousWrite(sim) };
}

async function updateLoad(ctx: RequestContext): Promise<RouteResult> {
  const ref = ctx.query.string('reference_number');
  if (!ref) throw badRequest('reference_number is required');
  const body = (await ctx.body()).fields;
  const { p } = loadByRef(ctx, ref);
  validateUpdateLoad(body, ctx.sim.options.variant);
  return { data: ctx.sim.changes.updateLoad(p, toStoredFields(ctx.sim, body), API_ACTOR) };
}

async function changeStatusMain(ctx: RequestContext): Promise<RouteResult> {
  const body = (await ctx.body()).fields;
  const { p } = loadByRef(ctx, ctx.params['ref'] as string);
  const status = body['status'];
  if (status === undefined || status === '') throw badRequest('status is required');
  if (status !== 'PENDING' && status !== 'AVAILABLE') throw badRequest('status must be PENDING or AVAILABLE');
  return { data: ctx.sim.changes.updateLoad(p, { status }, API_ACTOR) };
}

async function changeStatusBrokerage(ctx: RequestContext): Promise<RouteResult> {
  const body = (await ctx.body()).fields;
  // §4.4.4 does not say where parameters travel: accept body, then query.
  const param = (name: string): unknown => body[name] ?? ctx.query.string(name);
  const ref = param('reference_number');
  if (typeof ref !== 'string' || ref === '') throw badRequest('reference_number is required');
  const { p } = loadByRef(ctx, ref);
  const raw = param('status');
  if (raw === undefined || raw === '') throw badRequest('status is required');
  const byDisplay = Object.entries(BROKERAGE_STATUS_NAMES).find(([, name]) => name === raw)?.[0];
  const status = (LOAD_FLOW as readonly unknown[]).includes(raw) ? String(raw) : byDisplay;
  if (!status || !(LOAD_FLOW as readonly string[]).includes(status)) throw badRequest(`status must be one of ${LOAD_FLOW.join(', ')}`);
  const changes: Record<string, unknown> = { status };
  for (const f of ['containerNo', 'chassisNo']) {
    const v = param(f);
    if (typeof v === 'string' && v !== '') changes[f] = v;
  }
  return { data: ctx.sim.changes.updateLoad(p, changes, API_ACTOR) };
}

function deleteLoad(ctx: RequestContext): RouteResult {
  const id = ctx.params['id'] as string;
  const p = ctx.sim.store.loadPositionById(id);
  if (p === undefined) throw new HttpError(404, `load id ${id} not found`);
  const load = ctx.sim.store.loads.get(p) as Load;
  if (load['isDeleted'] === true) throw new HttpError(410, `load id ${id} has been removed`);
  return { data: ctx.sim.changes.deleteLoad(p, API_ACTOR), ambiguous: ambiguousWrite(ctx.sim) };
}

async function uploadDocument(ctx: RequestContext): Promise<RouteResult> {
  const body = await ctx.body();
  if (body.kind !== 'form') throw badRequest('documents must be sent as multipart/form-data');
  const ref = body.fields['reference_number'];
  if (typeof ref !== 'string' || ref === '') throw badRequest('reference_number is required');
  const documentType = body.fields['documentType'];
  if (typeof documentType !== 'string' || documentType === '') throw badRequest('documentType is required');
  if (!(UPLOAD_DOCUMENT_TYPES as readonly string[]).includes(documentType)) throw badRequest(`documentType "${documentType}" is not an allowed document type`);
  const file = body.files.find((f) => f.field === 'file');
  if (!file) throw badRequest('file is required');
  // The file is served from the storage origin (load-documents.ts), with bytes of the uploaded size.
  const { url } = attachLoadDocument(ctx.sim, ref, { type: documentType, fileName: file.filename, bytes: file.size }, API_ACTOR);
  return { data: { documentType, url } };
}

function listDocuments(ctx: RequestContext): RouteResult {
  const ref = ctx.query.string('reference_number');
  if (!ref) throw badRequest('reference_number is required');
  const docType = ctx.query.string('doc_type');
  if (!docType) throw badRequest('doc_type is required');
  const { load } = loadByRef(ctx, ref);
  const docs = ((load['documents'] as Array<{ type: string; url: string }>) ?? []).filter((d) => d.type === docType);
  return { data: docs };
}

export const loadRoutes: RouteDef[] = [
  { method: 'GET', pattern: '/loads', auth: 'access', handler: listLoads },
  { method: 'POST', pattern: '/loads', auth: 'access', handler: createLoad },
  { method: 'PUT', pattern: '/loads', auth: 'access', handler: updateLoad },
  { method: 'GET', pattern: '/loads/:ref', auth: 'access', handler: getLoad },
  { method: 'DELETE', pattern: '/loads/:id', auth: 'access', handler: deleteLoad },
  { method: 'POST', pattern: '/loads/document', auth: 'access', handler: uploadDocument },
  { method: 'GET', pattern: '/load-document', auth: 'access', handler: listDocuments },
  { method: 'GET', pattern: '/load-document-type', auth: 'access', handler: () => ({ data: LISTED_DOCUMENT_TYPES }) },
  { method: 'PUT', pattern: '/load-status/:ref', auth: 'access', variants: ['main'], handler: changeStatusMain },
  { method: 'PUT', pattern: '/load-status', auth: 'access', variants: ['brokerage'], handler: changeStatusBrokerage },
];
