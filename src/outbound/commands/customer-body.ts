import { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { anyItem, bool, dateTime, jsonArray, jsonObject, num, text } from './field-values.js';

/*
 * Customer bodies of §4.7 (create and update, per variant). Field types follow §2.11 where §4.7
 * leaves them open (the `doc_*` and `isSend*` flags are booleans there).
 */

const STRINGS = [
  'companyID', 'company_name', 'address1', 'city', 'state', 'country', 'zip_code', 'main_contact_name', 'secondary_contact_name',
  'mobile', 'email', 'qbEmail', 'billingEmail', 'extraEmail', 'credit_limit', 'payment_terms', 'filename', 'fileType', 'documents',
  'receiverEmail', 'fleetCustomer', 'notes', 'payType', 'mcNumber', 'notificationEmails', 'isSendNotificationEmail', 'portUsername',
  'secondaryPhoneNo', 'currency',
] as const;
const BOOLEANS = [
  'isAddressVerified', 'account_hold', 'isDeleted', 'isEmailNeedToSend', 'isSendContainerNotification', 'isSendPODEmail', 'doc_all',
  'doc_tir', 'doc_pod', 'doc_none', 'canEditLoad', 'isTIROptional', 'isSendEmailContainerReadyForPickup', 'isSendEmailLoadAccepted',
  'isSendEmailContainerAdd', 'isSendEmailContainerAvailable', 'isSendEmailPricingDetailEmail', 'isSendEmailDeliveryAppointmentChanged',
] as const;
const ARRAYS = ['customerType', 'newTerminal', 'emailStatuses', 'extraSubCustomer', 'salesAgents', 'customerTags'] as const;
const DATES = ['officeHoursStart', 'officeHoursEnd'] as const;
const MAIN_ONLY_STRINGS = ['externalSystemID'] as const;
const MAIN_ONLY_BOOLEANS = ['isInvalid'] as const;

/** Required on create (§4.7); `address` is built from the flat fields when not given (see below). */
const CREATE_REQUIRED = ['companyID', 'company_name', 'address1', 'isAddressVerified', 'city', 'state', 'country', 'zip_code'] as const;

/** Main update refuses these create fields (§4.7). */
const MAIN_UPDATE_REFUSED = new Set<string>([
  'filename', 'fileType', 'documents', 'isDeleted', 'isEmailNeedToSend', 'fleetCustomer', 'payType', 'isSendNotificationEmail',
  'isSendContainerNotification', 'isSendPODEmail', 'isTIROptional', 'isSendEmailContainerReadyForPickup', 'isSendEmailLoadAccepted',
  'isSendEmailContainerAdd', 'isSendEmailContainerAvailable', 'isSendEmailPricingDetailEmail', 'isSendEmailDeliveryAppointmentChanged',
]);

/**
 * Login secrets are not taken: the outbox keeps every command in plain text and results are
 * written back to the ERP's files, so a password would end up in several places.
 */
export const CUSTOMER_SECRET_FIELDS = ['password', 'portPassword'] as const;

const addressSchema = z.looseObject({
  address: text().optional(),
  address1: text().optional(),
  city: text().optional(),
  state: text().optional(),
  country: text().optional(),
  zip_code: text().optional(),
  lat: num().optional(),
  lng: num().optional(),
});

const geofenceObject = z.looseObject({ zoom: num().optional(), polygon: z.array(z.unknown()).optional(), center: z.array(z.unknown()).optional() });

function shapeFor(variant: ApiVariant, mode: 'create' | 'update', required: ReadonlySet<string> = new Set()): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  // Required fields are checked by the field itself, so every missing one is named at once.
  for (const f of STRINGS) shape[f] = required.has(f) ? text() : text().optional();
  for (const f of BOOLEANS) shape[f] = required.has(f) ? bool() : bool().optional();
  for (const f of ARRAYS) shape[f] = jsonArray(anyItem).optional();
  for (const f of DATES) shape[f] = dateTime().optional();
  if (variant === 'main') {
    for (const f of MAIN_ONLY_STRINGS) shape[f] = text().optional();
    for (const f of MAIN_ONLY_BOOLEANS) shape[f] = bool().optional();
  }
  shape['balance'] = num().optional();
  shape['address'] = jsonObject(addressSchema).optional();
  // §4.7: an object in the main create, a string in the main update and in brokerage.
  shape['geofence'] = variant === 'main' && mode === 'create' ? jsonObject(geofenceObject).optional() : text().optional();
  if (variant === 'main' && mode === 'update') for (const f of MAIN_UPDATE_REFUSED) shape[f] = refused('is not accepted by the main customer update (§4.7)');
  return shape;
}

/** A field known to the spec that this body refuses: the error says why instead of "unknown field". */
function refused(message: string) {
  return z
    .unknown()
    .optional()
    .refine((value) => value === undefined, message);
}

const refusedSecret = refused('is not accepted (secrets are not stored in the outbox); set it in the TMS');

/** The secrets are known fields, always refused. */
function withSecrets(shape: Record<string, z.ZodType>): Record<string, z.ZodType> {
  return { ...shape, ...Object.fromEntries(CUSTOMER_SECRET_FIELDS.map((f) => [f, refusedSecret])) };
}

/**
 * `POST /customer` body. `address` (an object) may be given as JSON, or is built from the flat
 * `address1`, `city`, `state`, `country`, `zip_code` — a CSV row cannot hold an object otherwise.
 * Brokerage also requires `main_contact_name`.
 */
export function customerCreateSchema(variant: ApiVariant) {
  const required = new Set<string>(variant === 'brokerage' ? [...CREATE_REQUIRED, 'main_contact_name'] : CREATE_REQUIRED);
  return z
    .strictObject(withSecrets(shapeFor(variant, 'create', required)))
    .transform((body) => {
      if (body['address'] !== undefined) return body;
      const address = { address: body['address1'], address1: body['address1'], city: body['city'], state: body['state'], country: body['country'], zip_code: body['zip_code'] };
      return { ...body, address };
    });
}

/** `PUT /customer/<id>` body: every field optional, at least one. */
export function customerUpdateSchema(variant: ApiVariant) {
  return z.strictObject(withSecrets(shapeFor(variant, 'update'))).superRefine((body, ctx) => {
    if (Object.keys(body).length === 0) ctx.addIssue({ code: 'custom', message: 'an update needs at least one field to change' });
  });
}
