import type { CollectionQuery, Rec } from '../collection.js';
import { API_ACTOR } from '../changes.js';
import { CUSTOMER_DOCUMENT_TYPES } from '../dataset/constants.js';
import type { CustomerKind } from '../dataset/customers.js';
import { HttpError, badRequest } from '../http-error.js';
import { COLLECTION_CODES, makeId } from '../ids.js';
import { DATE_RANGES, MAIN_DATETIME_RANGES, pageParams, rangeParams } from '../paging.js';
import { parseSortObject } from '../query-params.js';
import { ambiguousWrite } from '../faults.js';
import type { RequestContext, RouteDef, RouteResult } from '../router.js';

function listCustomers(kind: CustomerKind) {
  return (ctx: RequestContext): RouteResult => {
    const { sim, query } = ctx;
    const main = sim.options.variant === 'main';
    const { skip, limit } = pageParams(query, main ? 50 : 100);
    // §4.7 offers `sortBy` on customers in both variants, §4.8 on consignees in main only (a
    // brokerage server ignores it there, like any parameter it does not know).
    const sortable = main || kind === 'customers';
    const sort = (sortable ? parseSortObject('sortBy', query.object('sortBy'), ['createdAt', 'updatedAt']) : undefined) ?? { field: 'createdAt', desc: true };
    // Brokerage has only the date filters, matched by whole UTC day (§4.7, §4.8); main keeps the
    // full time of both kinds.
    const ranges = main ? rangeParams(query, [...DATE_RANGES, ...MAIN_DATETIME_RANGES]) : rangeParams(query, DATE_RANGES, { days: true });
    const searchTerm = query.string('searchTerm')?.toLowerCase();
    const fieldName = query.string('fieldName') ?? 'company_name';
    const nameSearch = query.string('nameSearch')?.toLowerCase();
    const types = query.array('customerType');
    const ids = [...(query.array('allIds') ?? []), ...(main ? (query.array('profileIds') ?? []) : [])];
    const accountHold = query.boolean('account_hold');
    const isInvalid = main ? query.boolean('isInvalid') : undefined;
    const onlyDeleted = query.boolean('isDeleted') === true;
    const withDeleted = query.boolean('isGetAll') === true || query.boolean('isIncludeDeleted') === true;
    const attrFilter = (r: Rec): boolean =>
      (!searchTerm || String(r[fieldName] ?? '').toLowerCase().includes(searchTerm)) &&
      (!nameSearch || String(r['company_name'] ?? '').toLowerCase().includes(nameSearch)) &&
      (!types?.length || ((r['customerType'] as string[]) ?? []).some((t) => types.includes(t))) &&
      (!ids.length || ids.includes(String(r['_id']))) &&
      (accountHold === undefined || r['account_hold'] === accountHold) &&
      (isInvalid === undefined || r['isInvalid'] === isInvalid);
    const collection = kind === 'customers' ? sim.store.customers : sim.store.consignees;
    const q: CollectionQuery<Rec> = {
      sortField: sort.field,
      desc: sort.desc,
      ranges,
      skip,
      limit,
      baseNone: onlyDeleted,
      overlayPredicate: (r) => (onlyDeleted ? r['isDeleted'] === true : withDeleted || r['isDeleted'] !== true) && attrFilter(r),
    };
    if (searchTerm || nameSearch || types?.length || ids.length || accountHold !== undefined || isInvalid !== undefined) {
      q.basePredicate = (p) => attrFilter(collection.generated(p));
      q.baseFilterKey = `${kind}:${JSON.stringify([searchTerm, fieldName, nameSearch, types, ids, accountHold, isInvalid])}`;
    }
    const result = collection.query(q);
    return { data: result.items, count: result.total };
  };
}

const CREATE_REQUIRED = ['companyID', 'company_name', 'address', 'address1', 'isAddressVerified', 'city', 'state', 'country', 'zip_code'];
const MAIN_UPDATE_REJECTED = new Set([
  'password', 'filename', 'fileType', 'documents', 'isDeleted', 'isEmailNeedToSend', 'fleetCustomer', 'payType', 'isSendNotificationEmail',
  'isSendContainerNotification', 'isSendPODEmail', 'isTIROptional', 'isSendEmailContainerReadyForPickup', 'isSendEmailLoadAccepted',
  'isSendEmailContainerAdd', 'isSendEmailContainerAvailable', 'isSendEmailPricingDetailEmail', 'isSendEmailDeliveryAppointmentChanged',
]);

function customerPosition(ctx: RequestContext, kind: CustomerKind): number {
  const id = ctx.params['id'] as string;
  const p = ctx.sim.store.customerPositionById(kind, id);
  if (p === undefined) throw new HttpError(404, `customer ${id} not found`);
  const collection = kind === 'customers' ? ctx.sim.store.customers : ctx.sim.store.consignees;
  if (collection.get(p)?.['isDeleted'] === true) throw new HttpError(410, `customer ${id} has been removed`);
  return p;
}

function createCustomer(kind: CustomerKind) {
  return async (ctx: RequestContext): Promise<RouteResult> => {
    const body = (await ctx.body()).fields;
    const required = ctx.sim.options.variant === 'brokerage' ? [...CREATE_REQUIRED, 'main_contact_name'] : CREATE_REQUIRED;
    for (const field of required) {
      if (body[field] === undefined || body[field] === null || body[field] === '') throw badRequest(`${field} is required`);
    }
    if (typeof body['address'] !== 'object' || Array.isArray(body['address'])) throw badRequest('address must be an object');
    if (typeof body['isAddressVerified'] !== 'boolean') throw badRequest('isAddressVerified must be a boolean');
    const { password: _password, document: _document, ...fields } = body;
    const { record } = ctx.sim.changes.createCustomer(kind, fields, API_ACTOR);
    const user = {
      _id: makeId(COLLECTION_CODES.misc, ctx.sim.options.seed, 9_000_000 + Number.parseInt(String(record['_id']).slice(-8), 16)),
      email: record['email'],
      username: record['company_name'],
      carrier: record['carrier'],
      role: 'customer',
      customer: record,
      isActive: true,
      isEmailVerified: false,
    };
    return { data: { statusCode: 201, message: 'Customer created successfully', data: { user, customer: record } }, ambiguous: ambiguousWrite(ctx.sim) };
  };
}

async function updateCustomer(ctx: RequestContext): Promise<RouteResult> {
  const body = (await ctx.body()).fields;
  if (Object.keys(body).length === 0) throw badRequest('body has no fields to update');
  const main = ctx.sim.options.variant === 'main';
  for (const key of Object.keys(body)) {
    if ((main && MAIN_UPDATE_REJECTED.has(key)) || key === 'password' || key === '_id') throw badRequest(`${key} cannot be updated`);
  }
  const p = customerPosition(ctx, 'customers');
  const record = ctx.sim.changes.updateCustomer('customers', p, body, API_ACTOR);
  return { data: { statusCode: 200, message: 'Customer updated successfully', data: record } };
}

function deleteCustomer(ctx: RequestContext): RouteResult {
  const p = customerPosition(ctx, 'customers');
  ctx.sim.changes.updateCustomer('customers', p, { isDeleted: true }, API_ACTOR, 'REMOVE');
  return { data: { statusCode: 200, message: 'Customer removed successfully', data: { success: true } } };
}

async function uploadCustomerDocument(ctx: RequestContext): Promise<RouteResult> {
  const body = await ctx.body();
  if (body.kind !== 'form') throw badRequest('documents must be sent as multipart/form-data');
  const customerId = body.fields['customerId'];
  if (typeof customerId !== 'string' || customerId === '') throw badRequest('customerId is required');
  const documentType = body.fields['documentType'];
  if (typeof documentType !== 'string' || !(CUSTOMER_DOCUMENT_TYPES as readonly string[]).includes(documentType)) {
    throw badRequest(`documentType must be one of ${CUSTOMER_DOCUMENT_TYPES.join(', ')}`);
  }
  const file = body.files.find((f) => f.field === 'file');
  if (!file) throw badRequest('file is required');
  const p = ctx.sim.store.customerPositionById('customers', customerId);
  if (p === undefined) throw new HttpError(404, `customer ${customerId} not found`);
  const record = ctx.sim.store.customers.get(p) as Rec;
  const url = `https://files.freight-sim.invalid/customers/${customerId}/${encodeURIComponent(file.filename || 'upload')}`;
  const now = ctx.sim.clock.iso();
  const documents = [...((record['documents'] as Rec[]) ?? []), { description: '', userId: { _id: 'public-api', lastName: 'API', name: 'Public' }, date: now, url, type: documentType, _id: makeId(COLLECTION_CODES.documents, ctx.sim.options.seed, Date.now()), checked: false }];
  ctx.sim.changes.updateCustomer('customers', p, { documents }, API_ACTOR, 'DOCUMENT_UPLOAD');
  return { data: { documentType, url } };
}

export const customerRoutes: RouteDef[] = [
  { method: 'GET', pattern: '/customer', auth: 'access', handler: listCustomers('customers') },
  { method: 'POST', pattern: '/customer', auth: 'access', handler: createCustomer('customers') },
  { method: 'GET', pattern: '/customer/:id', auth: 'access', handler: (ctx) => ({ data: ctx.sim.store.customers.get(customerPosition(ctx, 'customers')) }) },
  { method: 'PUT', pattern: '/customer/:id', auth: 'access', handler: updateCustomer },
  { method: 'DELETE', pattern: '/customer/:id', auth: 'access', handler: deleteCustomer },
  { method: 'POST', pattern: '/customer/document', auth: 'access', handler: uploadCustomerDocument },
  { method: 'GET', pattern: '/consignee', auth: 'access', handler: listCustomers('consignees') },
  { method: 'POST', pattern: '/consignee', auth: 'access', handler: createCustomer('consignees') },
];
