import { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { ARRIVED_OR_DEPARTED, MAIN_STATUS_VALUES } from '../../api/spec-enums.js';
import { anyItem, bool, dateTime, jsonArray, oneOf, text } from './field-values.js';

/**
 * Change-status parameters. Main: `PUT /load-status/<reference_number>` with `status` PENDING or
 * AVAILABLE only (§3.4). Brokerage: `PUT /load-status/` with the §4.4.4 parameters; the load's
 * `reference_number` is added by the dispatcher once the load is known.
 */
export function changeStatusSchema(variant: ApiVariant) {
  if (variant === 'main') {
    return z.strictObject({ status: oneOf(MAIN_STATUS_VALUES, { caseInsensitive: true }) });
  }
  return z
    .strictObject({
      status: text().optional(),
      routingOrderId: text().optional(),
      arrivedOrDeparted: oneOf(ARRIVED_OR_DEPARTED, { caseInsensitive: true }).optional(),
      date: dateTime().optional(),
      completeLoad: bool().optional(),
      strictChange: bool().optional(),
      chassisNo: text().optional(),
      containerNo: text().optional(),
      notes: text().optional(),
      timeOfStatus: dateTime().optional(),
      isPrePullCharge: bool().optional(),
      billingDate: text().optional(),
      isCombined: bool().optional(),
      loads: jsonArray(anyItem).optional(),
      isSubCustomer: bool().optional(),
      additionalIds: jsonArray(anyItem).optional(),
    })
    .superRefine((body, ctx) => {
      if (body.status === undefined && body.arrivedOrDeparted === undefined && body.completeLoad === undefined) {
        ctx.addIssue({ code: 'custom', path: ['status'], message: 'is required (or arrivedOrDeparted, or completeLoad)' });
      }
    });
}
