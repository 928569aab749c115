import { z } from 'zod';
import { BROKERAGE_ROAD_EXCLUDED, CREATE_LOAD_FIELDS, isBrokerageCreateExcluded } from '../../api/load-fields.js';
import { HOLD_VALUES, PRE_SET_ORDER_STATUS, ROUTE_TYPES, TYPE_OF_LOAD } from '../../api/spec-enums.js';
import type { ApiVariant } from '../../api/variant.js';
import { addressDetailsSchema } from './address-details.js';
import { anyItem, bool, dateTime, id, idList, jsonArray, jsonObject, oneOf, text } from './field-values.js';

/**
 * The create-load body per variant. Parties (`caller`, `shipper`, `consignee`) are checked for
 * shape here; whether they are API ids or ERP codes is decided afterwards (resolve-parties.ts).
 */
export function createLoadSchema(variant: ApiVariant) {
  const details = addressDetailsSchema(variant);
  const shape: Record<string, z.ZodType> = {
    type_of_load: oneOf(TYPE_OF_LOAD, { caseInsensitive: true }),
    preSetOrderStatus: oneOf(PRE_SET_ORDER_STATUS, { caseInsensitive: true }),
    caller: id(),
    shipper: idList({ min: 1 }),
    consignee: variant === 'brokerage' ? idList({ min: 1 }) : idList().optional(),
    consigneeDetails: jsonArray(details).optional(),
    shipperDetails: jsonArray(details).optional(),
    emptyOriginDetails: jsonObject(details).optional(),
    status: oneOf(['PENDING'] as const).optional(),
    freight: oneOf(HOLD_VALUES, { caseInsensitive: true }).optional(),
    custom: oneOf(HOLD_VALUES, { caseInsensitive: true }).optional(),
    routeType: oneOf(ROUTE_TYPES, { caseInsensitive: true }).optional(),
  };
  for (const f of CREATE_LOAD_FIELDS.strings) shape[f] = text().optional();
  for (const f of CREATE_LOAD_FIELDS.dateTimes) shape[f] = dateTime().optional();
  for (const f of CREATE_LOAD_FIELDS.booleans) shape[f] = bool().optional();
  for (const f of CREATE_LOAD_FIELDS.freeArrays) shape[f] = jsonArray(anyItem).optional();
  if (variant === 'brokerage') {
    for (const f of Object.keys(shape)) if (isBrokerageCreateExcluded(f)) delete shape[f];
    shape.instructionNote = text().optional();
    shape.carrierHold = bool().optional();
    shape.brokerHold = bool().optional();
  }
  // customerEmployee may be plain emails/ids in a CSV cell.
  shape.customerEmployee = idList().optional();
  return z.strictObject(shape).superRefine((body, ctx) => {
    if (variant === 'brokerage' && body.type_of_load === 'ROAD') {
      for (const f of BROKERAGE_ROAD_EXCLUDED) {
        if (body[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: 'is not applicable to road-only loads (type_of_load ROAD)' });
      }
    }
  });
}

