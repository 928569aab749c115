import { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { addressDetailsSchema } from './address-details.js';
import { HOLD_VALUES, PRE_SET_ORDER_STATUS } from '../../api/spec-enums.js';
import { anyItem, bool, dateTime, id, idList, jsonArray, jsonObject, oneOf, text } from './field-values.js';

const UPDATE_BOOLEANS = [
  'hazmat', 'hot', 'isHot', 'carrierHold', 'brokerHold', 'overWeight', 'isEdi', 'isContainerConfirm', 'isChassisConfirm', 'isReUse',
  'isPrePullCharge', 'isNextContainerNeedToPickup', 'scale',
] as const;
const UPDATE_IDS = ['caller', 'emptyOrigin', 'terminal'] as const;
const UPDATE_DATES = ['vessel', 'emptyDay', 'freeReturnDate', 'lastFreeDay', 'returnFromTime', 'returnToTime', 'loadAssignedDate'] as const;
const UPDATE_FREE_ARRAYS = ['pickupTimes', 'deliveryTimes', 'pricing', 'items'] as const;
const UPDATE_STRINGS = [
  'returnNo', 'chassisId', 'chassisType', 'temperature', 'chassisSize', 'chassisOwner', 'liquor', 'routeType', 'scac', 'billingNote', 'notes',
  'driverNote', 'yardNote', 'officeNote', 'bookingNo', 'callerPONo', 'callerbillLandingNo', 'deliveryOrderNo', 'DoNo', 'purchaseOrderNo',
  'releaseNo', 'sealNo', 'shipmentNo', 'secondaryReferenceNo', 'chassisNumber', 'trailer', 'trailerType', 'trailerSize', 'otherReference',
  'chassisPick', 'chassisTermination', 'loadTime', 'containerAvailableDay', 'cutOff', 'return', 'pickupFromTime', 'pickupToTime',
  'deliveryFromTime', 'deliveryToTime', 'pickupNo', 'sealBookingNo', 'shipperBookingNo', 'callerBookingNo', 'containerNo', 'containerSize',
  'containerType', 'containerOwner', 'chassisNo', 'genset', 'approvedDate', 'appointmentNo', 'reservationNo', 'grayChassisId',
  'grayContainerNo', 'grayContainerSize', 'grayContainerType', 'grayContainerOwner', 'grayChassisNo', 'grayChassisSize', 'grayChassisType',
  'grayChassisOwner', 'tareWeight',
] as const;

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
  for (const f of UPDATE_BOOLEANS) shape[f] = bool().optional();
  for (const f of UPDATE_IDS) shape[f] = id().optional();
  for (const f of UPDATE_DATES) shape[f] = dateTime().optional();
  for (const f of UPDATE_FREE_ARRAYS) shape[f] = jsonArray(anyItem).optional();
  for (const f of UPDATE_STRINGS) shape[f] = text().optional();
  if (variant === 'brokerage') {
    shape.dischargedDate = dateTime().optional();
    shape.instructionNote = text().optional();
  }
  return z.strictObject(shape).superRefine((body, ctx) => {
    if (Object.keys(body).length === 0) ctx.addIssue({ code: 'custom', message: 'an update needs at least one field to change' });
  });
}
