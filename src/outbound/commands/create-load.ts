import { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { addressDetailsSchema } from './address-details.js';
import { HOLD_VALUES, PRE_SET_ORDER_STATUS, ROUTE_TYPES, TYPE_OF_LOAD } from '../../api/spec-enums.js';
import { anyItem, bool, dateTime, id, idList, jsonArray, jsonObject, oneOf, text } from './field-values.js';

/** §4.4.1 optional strings (main); brokerage drops some, see below. */
const CREATE_STRINGS = [
  'terminal', 'temperature', 'emptyOrigin', 'chassisPick', 'chassisNo', 'genset', 'deliveryOrderNo', 'callerbillLandingNo',
  'secondaryReferenceNo', 'doNo', 'bookingNo', 'sealNo', 'purchaseOrderNo', 'shipmentNo', 'containerNo', 'releaseNo', 'callerPONo',
  'appointmentNo', 'returnNo', 'reservationNo', 'scac', 'containerSize', 'containerType', 'containerOwner', 'grayContainerNo',
  'grayContainerSize', 'grayContainerType', 'grayContainerOwner', 'trailer', 'trailerType', 'trailerSize', 'grayChassisNo',
  'grayChassisSize', 'grayChassisType', 'grayChassisOwner', 'chassisSize', 'chassisType', 'chassisOwner', 'driverNote', 'billingNote',
  'yardNote', 'officeNote', 'tareWeight', 'containerAvailableDay', 'cutOff', 'loadTime',
] as const;
const CREATE_DATETIMES = ['returnFromTime', 'returnToTime', 'vessel', 'lastFreeDay', 'dischargedDate', 'outgateDate', 'emptyDay', 'freeReturnDate', 'ingateDate', 'return'] as const;
const CREATE_BOOLEANS = ['hazmat', 'hot', 'overWeight', 'overHeight', 'liquor', 'isGenset', 'scale'] as const;
const CREATE_FREE_ARRAYS = ['customerEmployee', 'routingOrder', 'pricing', 'items', 'pickupTimes', 'deliveryTimes'] as const;

/** Brokerage create has no status, chassis fields, notes, tareWeight, scale (§4.4.1). */
const BROKERAGE_EXCLUDED = new Set<string>(['status', 'chassisPick', 'chassisNo', 'driverNote', 'billingNote', 'yardNote', 'officeNote', 'tareWeight', 'scale']);
/** Brokerage road-only loads: these fields are not applicable. */
export const BROKERAGE_ROAD_EXCLUDED = ['liquor', 'appointmentNo', 'returnNo', 'reservationNo'] as const;

function isBrokerageExcluded(field: string): boolean {
  return BROKERAGE_EXCLUDED.has(field) || /^(chassis|grayChassis)/.test(field);
}

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
  for (const f of CREATE_STRINGS) shape[f] = text().optional();
  for (const f of CREATE_DATETIMES) shape[f] = dateTime().optional();
  for (const f of CREATE_BOOLEANS) shape[f] = bool().optional();
  for (const f of CREATE_FREE_ARRAYS) shape[f] = jsonArray(anyItem).optional();
  if (variant === 'brokerage') {
    for (const f of Object.keys(shape)) if (isBrokerageExcluded(f)) delete shape[f];
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

