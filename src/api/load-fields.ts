/**
 * The fields of the load create (§4.4.1) and update (§4.4.2) bodies, grouped by the type the spec
 * gives them: the single copy. Outbound builds its command schemas from these lists and the
 * simulator (src/simulator/load-validation.ts) validates request bodies with them, so a field
 * added to one side cannot be missing on the other. Fields with rules of their own are not in
 * these lists; each side names them where it applies the rule: on create the enums (type_of_load,
 * preSetOrderStatus, status, freight, custom, routeType), the parties (caller, shipper,
 * consignee) and the address details (consigneeDetails, shipperDetails, emptyOriginDetails); on
 * update the parties, the address details, preSetOrderStatus and the holds (freight, custom).
 */

/** §4.4.1, main variant; brokerage drops some (isBrokerageCreateExcluded). */
export const CREATE_LOAD_FIELDS = {
  strings: [
    'terminal', 'temperature', 'emptyOrigin', 'chassisPick', 'chassisNo', 'genset', 'deliveryOrderNo', 'callerbillLandingNo',
    'secondaryReferenceNo', 'doNo', 'bookingNo', 'sealNo', 'purchaseOrderNo', 'shipmentNo', 'containerNo', 'releaseNo', 'callerPONo',
    'appointmentNo', 'returnNo', 'reservationNo', 'scac', 'containerSize', 'containerType', 'containerOwner', 'grayContainerNo',
    'grayContainerSize', 'grayContainerType', 'grayContainerOwner', 'trailer', 'trailerType', 'trailerSize', 'grayChassisNo',
    'grayChassisSize', 'grayChassisType', 'grayChassisOwner', 'chassisSize', 'chassisType', 'chassisOwner', 'driverNote', 'billingNote',
    'yardNote', 'officeNote', 'tareWeight', 'containerAvailableDay', 'cutOff', 'loadTime',
  ],
  dateTimes: ['returnFromTime', 'returnToTime', 'vessel', 'lastFreeDay', 'dischargedDate', 'outgateDate', 'emptyDay', 'freeReturnDate', 'ingateDate', 'return'],
  booleans: ['hazmat', 'hot', 'overWeight', 'overHeight', 'liquor', 'isGenset', 'scale'],
  /** Arrays whose items the spec leaves open. */
  freeArrays: ['customerEmployee', 'routingOrder', 'pricing', 'items', 'pickupTimes', 'deliveryTimes'],
} as const;

/** Brokerage create has no status, chassis fields, notes, tareWeight, scale (§4.4.1). */
const BROKERAGE_CREATE_EXCLUDED = new Set<string>(['status', 'chassisPick', 'chassisNo', 'driverNote', 'billingNote', 'yardNote', 'officeNote', 'tareWeight', 'scale']);

export function isBrokerageCreateExcluded(field: string): boolean {
  return BROKERAGE_CREATE_EXCLUDED.has(field) || /^(chassis|grayChassis)/.test(field);
}

/** Brokerage road-only loads (type_of_load ROAD): these fields are not applicable. */
export const BROKERAGE_ROAD_EXCLUDED = ['liquor', 'appointmentNo', 'returnNo', 'reservationNo'] as const;

/** §4.4.2: every field optional. Brokerage also accepts `dischargedDate` and `instructionNote`. */
export const UPDATE_LOAD_FIELDS = {
  booleans: [
    'hazmat', 'hot', 'isHot', 'carrierHold', 'brokerHold', 'overWeight', 'isEdi', 'isContainerConfirm', 'isChassisConfirm', 'isReUse',
    'isPrePullCharge', 'isNextContainerNeedToPickup', 'scale',
  ],
  ids: ['caller', 'emptyOrigin', 'terminal'],
  dates: ['vessel', 'emptyDay', 'freeReturnDate', 'lastFreeDay', 'returnFromTime', 'returnToTime', 'loadAssignedDate'],
  /** Arrays whose items the spec leaves open. */
  freeArrays: ['pickupTimes', 'deliveryTimes', 'pricing', 'items'],
  /** Free text. §4.4.2 also lists preSetOrderStatus among the strings; it is an enum (§2.6), checked on its own. */
  strings: [
    'returnNo', 'chassisId', 'chassisType', 'temperature', 'chassisSize', 'chassisOwner', 'liquor', 'routeType', 'scac', 'billingNote', 'notes',
    'driverNote', 'yardNote', 'officeNote', 'bookingNo', 'callerPONo', 'callerbillLandingNo', 'deliveryOrderNo', 'DoNo', 'purchaseOrderNo',
    'releaseNo', 'sealNo', 'shipmentNo', 'secondaryReferenceNo', 'chassisNumber', 'trailer', 'trailerType', 'trailerSize', 'otherReference',
    'chassisPick', 'chassisTermination', 'loadTime', 'containerAvailableDay', 'cutOff', 'return', 'pickupFromTime', 'pickupToTime',
    'deliveryFromTime', 'deliveryToTime', 'pickupNo', 'sealBookingNo', 'shipperBookingNo', 'callerBookingNo', 'containerNo', 'containerSize',
    'containerType', 'containerOwner', 'chassisNo', 'genset', 'approvedDate', 'appointmentNo', 'reservationNo', 'grayChassisId',
    'grayContainerNo', 'grayContainerSize', 'grayContainerType', 'grayContainerOwner', 'grayChassisNo', 'grayChassisSize', 'grayChassisType',
    'grayChassisOwner', 'tareWeight',
  ],
} as const;

