import { BROKERAGE_ROAD_EXCLUDED, CREATE_LOAD_FIELDS, UPDATE_LOAD_FIELDS, isBrokerageCreateExcluded } from '../api/load-fields.js';
import { HOLD_VALUES, PRE_SET_ORDER_STATUS, ROUTE_TYPES, TYPE_OF_LOAD } from '../api/spec-enums.js';
import { badRequest } from './http-error.js';
import type { Variant } from './options.js';

/** The spec's enumerations are the client's (src/api/spec-enums.ts): the simulator checks bodies with the same copy. */
const isOneOf = (values: readonly string[], value: unknown): boolean => typeof value === 'string' && values.includes(value);

/**
 * Request-body rules of §4.4.1 (create) and §4.4.2 (update), per variant. Every violation is a 400
 * whose message names the field, so a client can write back a precise error. Unknown fields are
 * rejected too: a client that sends the other variant's field names must find out.
 */

export type Kind = 'string' | 'boolean' | 'array' | 'object' | 'datetime' | 'holdFlag';

// The plain fields come from the spec lists production uses (src/api/load-fields.ts); the ones
// with rules of their own are named here, with the kind this validator checks them as.
const CREATE_STRINGS = ['status', 'freight', 'custom', 'routeType', ...CREATE_LOAD_FIELDS.strings];
const CREATE_ARRAYS = ['consignee', 'consigneeDetails', 'shipperDetails', ...CREATE_LOAD_FIELDS.freeArrays];

/** Accepted create-load fields and their kinds (exported for the spec cross-check test). */
export function createFields(variant: Variant): Map<string, Kind> {
  const fields = new Map<string, Kind>([
    ['type_of_load', 'string'],
    ['preSetOrderStatus', 'string'],
    ['caller', 'string'],
    ['shipper', 'array'],
    ['emptyOriginDetails', 'object'],
  ]);
  for (const f of CREATE_STRINGS) fields.set(f, 'string');
  for (const f of CREATE_ARRAYS) fields.set(f, 'array');
  for (const f of CREATE_LOAD_FIELDS.dateTimes) fields.set(f, 'datetime');
  for (const f of CREATE_LOAD_FIELDS.booleans) fields.set(f, 'boolean');
  if (variant === 'brokerage') {
    for (const f of [...fields.keys()]) {
      if (isBrokerageCreateExcluded(f)) fields.delete(f);
    }
    fields.set('instructionNote', 'string');
    fields.set('carrierHold', 'boolean');
    fields.set('brokerHold', 'boolean');
  }
  return fields;
}

// Known gap, kept as it was: §4.4.2 also lists emptyOriginDetails, which outbound may send and this
// validator rejects as unknown (left for the simulator/outbound cross-check).
const UPDATE_ARRAYS = ['shipper', 'consignee', 'consigneeDetails', 'shipperDetails', ...UPDATE_LOAD_FIELDS.freeArrays];
// preSetOrderStatus is a string here and checked against the enum in validateUpdateLoad.
const UPDATE_STRINGS = [...UPDATE_LOAD_FIELDS.strings, 'preSetOrderStatus'];

/** Accepted update-load fields and their kinds (exported for the spec cross-check test). */
export function updateFields(variant: Variant): Map<string, Kind> {
  const fields = new Map<string, Kind>();
  for (const f of UPDATE_LOAD_FIELDS.booleans) fields.set(f, 'boolean');
  fields.set('custom', 'holdFlag');
  fields.set('freight', 'holdFlag');
  for (const f of UPDATE_LOAD_FIELDS.ids) fields.set(f, 'string');
  for (const f of UPDATE_ARRAYS) fields.set(f, 'array');
  for (const f of UPDATE_LOAD_FIELDS.dates) fields.set(f, 'datetime');
  for (const f of UPDATE_STRINGS) fields.set(f, 'string');
  if (variant === 'brokerage') {
    fields.set('dischargedDate', 'datetime');
    fields.set('instructionNote', 'string');
  }
  return fields;
}

function checkKind(field: string, kind: Kind, value: unknown, variant: Variant): void {
  if (value === null) return;
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw badRequest(`${field} must be a string`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') throw badRequest(`${field} must be a boolean`);
      return;
    case 'array':
      if (!Array.isArray(value)) throw badRequest(`${field} must be an array`);
      return;
    case 'object':
      if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${field} must be an object`);
      return;
    case 'datetime':
      if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw badRequest(`${field} must be an ISO 8601 datetime`);
      return;
    case 'holdFlag':
      if (variant === 'main' ? typeof value !== 'boolean' : !isOneOf(HOLD_VALUES, value)) {
        throw badRequest(variant === 'main' ? `${field} must be a boolean` : `${field} must be HOLD or RELEASED`);
      }
      return;
  }
}

export function validateCreateLoad(body: Record<string, unknown>, variant: Variant, customerExists: (id: string) => boolean, consigneeExists: (id: string) => boolean): void {
  const fields = createFields(variant);
  for (const key of Object.keys(body)) {
    const kind = fields.get(key);
    if (!kind) throw badRequest(`${key} is not an accepted field for creating a load`);
    checkKind(key, kind, body[key], variant);
  }
  const type = body['type_of_load'];
  if (type === undefined || type === null || type === '') throw badRequest('type_of_load is required');
  if (!isOneOf(TYPE_OF_LOAD, type)) throw badRequest(`type_of_load must be one of ${TYPE_OF_LOAD.join(', ')}`);
  if (!('preSetOrderStatus' in body) || body['preSetOrderStatus'] === null) throw badRequest('preSetOrderStatus is required (it may be the empty string)');
  if (!isOneOf(PRE_SET_ORDER_STATUS, body['preSetOrderStatus'])) throw badRequest('preSetOrderStatus is not an allowed value');
  const caller = body['caller'];
  if (typeof caller !== 'string' || caller === '') throw badRequest('caller is required');
  if (!customerExists(caller)) throw badRequest(`caller ${caller} is not an existing customer id`);
  const shipper = body['shipper'];
  if (!Array.isArray(shipper) || shipper.length === 0) throw badRequest('shipper is required (array of ids)');
  if (shipper.some((s) => typeof s !== 'string' || s === '')) throw badRequest('shipper must hold id strings');
  const consignee = body['consignee'];
  if (variant === 'brokerage' && (!Array.isArray(consignee) || consignee.length === 0)) throw badRequest('consignee is required (array of ids)');
  if (Array.isArray(consignee)) {
    for (const id of consignee) {
      if (typeof id !== 'string' || !(consigneeExists(id) || customerExists(id))) throw badRequest(`consignee ${String(id)} is not an existing id`);
    }
  }
  if (variant === 'main' && body['status'] !== undefined && body['status'] !== 'PENDING') throw badRequest('status must be PENDING');
  for (const f of ['freight', 'custom']) {
    if (body[f] !== undefined && !isOneOf(HOLD_VALUES, body[f])) throw badRequest(`${f} must be HOLD or RELEASED`);
  }
  if (body['routeType'] !== undefined && !isOneOf(ROUTE_TYPES, body['routeType'])) throw badRequest('routeType must be Local or Highway');
  if (variant === 'brokerage' && type === 'ROAD') {
    for (const f of BROKERAGE_ROAD_EXCLUDED) if (f in body) throw badRequest(`${f} is not applicable to road loads`);
  }
}

export function validateUpdateLoad(body: Record<string, unknown>, variant: Variant): void {
  const fields = updateFields(variant);
  const keys = Object.keys(body);
  if (keys.length === 0) throw badRequest('body has no fields to update');
  for (const key of keys) {
    const kind = fields.get(key);
    if (!kind) throw badRequest(`${key} is not an accepted field for updating a load`);
    checkKind(key, kind, body[key], variant);
  }
  if (body['preSetOrderStatus'] !== undefined && !isOneOf(PRE_SET_ORDER_STATUS, body['preSetOrderStatus'])) {
    throw badRequest('preSetOrderStatus is not an allowed value');
  }
}
