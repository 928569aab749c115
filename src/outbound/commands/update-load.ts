import { z } from 'zod';
import { UPDATE_LOAD_FIELDS } from '../../api/load-fields.js';
import { HOLD_VALUES, PRE_SET_ORDER_STATUS } from '../../api/spec-enums.js';
import type { ApiVariant } from '../../api/variant.js';
import { addressDetailsSchema } from './address-details.js';
import { anyItem, bool, dateTime, id, idList, jsonArray, jsonObject, oneOf, text } from './field-values.js';

/**
 * The update-load body (§4.4.2): every field optional, at least one present. `freight` and
 * `custom` are booleans in main and `HOLD`/`RELEASED` in brokerage; brokerage also accepts
 * `dischargedDate` and `instructionNote`.
 */
export function updateLoadSchema(variant: ApiVariant) {
  const details = addressDetailsSchema(variant);
  const hold = variant === 'main' ? bool() : oneOf(HOLD_VALUES, { caseInsensitive: true });
  const shape: Record<string, z.ZodType> = {
    shipper: idList({ min: 1 }).optional(),
    consignee: idList().optional(),
    consigneeDetails: jsonArray(details).optional(),
    shipperDetails: jsonArray(details).optional(),
    emptyOriginDetails: jsonObject(details).optional(),
    preSetOrderStatus: oneOf(PRE_SET_ORDER_STATUS, { caseInsensitive: true }).optional(),
    freight: hold.optional(),
    custom: hold.optional(),
  };
  for (const f of UPDATE_LOAD_FIELDS.booleans) shape[f] = bool().optional();
  for (const f of UPDATE_LOAD_FIELDS.ids) shape[f] = id().optional();
  for (const f of UPDATE_LOAD_FIELDS.dates) shape[f] = dateTime().optional();
  for (const f of UPDATE_LOAD_FIELDS.freeArrays) shape[f] = jsonArray(anyItem).optional();
  for (const f of UPDATE_LOAD_FIELDS.strings) shape[f] = text().optional();
  if (variant === 'brokerage') {
    shape.dischargedDate = dateTime().optional();
    shape.instructionNote = text().optional();
  }
  return z.strictObject(shape).superRefine((body, ctx) => {
    if (Object.keys(body).length === 0) ctx.addIssue({ code: 'custom', message: 'an update needs at least one field to change' });
  });
}
