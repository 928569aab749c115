import { z } from 'zod';
import { identifier, optionalBoolean, optionalDate, optionalNumber, optionalString, requiredString } from './common.js';

/**
 * Resource schemas (spec §2). `looseObject` keeps every field the server sends — the full raw
 * JSON reaches the sinks — while the listed fields are the ones the daemon reads.
 */

export const tokenRecordSchema = z.looseObject({
  access_token: z.string().min(1).optional(),
  token: z.string().min(1).optional(),
  refresh_token: z.string().min(1).optional(),
  tokenType: optionalString,
});
export type TokenRecord = z.infer<typeof tokenRecordSchema>;

export const loadSchema = z.looseObject({
  _id: identifier,
  reference_number: requiredString,
  status: optionalString,
  type_of_load: optionalString,
  isDeleted: optionalBoolean,
  createdAt: optionalDate,
  updatedAt: optionalDate,
  secondaryReferenceNo: optionalString,
  containerNo: optionalString,
});
export type Load = z.infer<typeof loadSchema>;

export const invoiceEntrySchema = z.looseObject({
  load_reference_number: optionalString,
  reference_number: optionalString,
  status: optionalString,
  billingDate: optionalDate,
  pricing: z.array(z.unknown()).nullable().optional(),
});

export const invoiceSchema = z.looseObject({
  _id: identifier,
  status: optionalString,
  billingDate: optionalDate,
  createdAt: optionalDate,
  updatedAt: optionalDate,
  invoice: z.array(invoiceEntrySchema).nullable().optional(),
  paymentHistory: z.array(z.unknown()).nullable().optional(),
  totalAmount: optionalNumber,
  paidAmount: optionalNumber,
});
export type Invoice = z.infer<typeof invoiceSchema>;

export const billSchema = z.looseObject({
  billId: identifier.optional(),
  _id: identifier.optional(),
  billNumber: optionalString,
  status: optionalString,
  createdAt: optionalDate,
  updatedAt: optionalDate,
});
export type Bill = z.infer<typeof billSchema>;

export const supportMoveSchema = z.looseObject({
  _id: identifier.optional(),
  supportMoveNumber: z.string().min(1),
  moveStatus: optionalString,
  createdAt: optionalDate,
  updatedAt: optionalDate,
});
export type SupportMove = z.infer<typeof supportMoveSchema>;

export const customerSchema = z.looseObject({
  _id: identifier,
  company_name: optionalString,
  companyID: optionalString,
  isDeleted: optionalBoolean,
  createdAt: optionalDate,
  updatedAt: optionalDate,
});
export type Customer = z.infer<typeof customerSchema>;

export const auditRecordSchema = z.looseObject({
  _id: identifier.optional(),
  action: optionalString,
  entityId: optionalString,
  actorId: optionalString,
  createdAt: z.string().min(1),
  newData: z.unknown().optional(),
  oldData: z.unknown().optional(),
});
export type AuditRecord = z.infer<typeof auditRecordSchema>;

export const webhookEventSchema = z.looseObject({
  _id: identifier,
  eventType: optionalString,
  /** Reported in real event records instead of `eventType`; mappings fall back to it. */
  event_type: optionalString,
  webhookUrl: optionalString,
  data: z.unknown().optional(),
  createdAt: optionalDate,
  updatedAt: optionalDate,
});
export type WebhookEventRecord = z.infer<typeof webhookEventSchema>;

export const chargeCodeSchema = z.looseObject({
  _id: identifier,
  name: optionalString,
  value: optionalString,
  isActive: optionalBoolean,
});
export type ChargeCode = z.infer<typeof chargeCodeSchema>;

export const loadDocumentSchema = z.looseObject({ type: optionalString, url: optionalString });
export type LoadDocument = z.infer<typeof loadDocumentSchema>;

export const uploadedDocumentSchema = z.looseObject({ documentType: optionalString, url: optionalString });
export type UploadedDocument = z.infer<typeof uploadedDocumentSchema>;

/** Records the spec leaves mostly open. */
export const looseRecordSchema = z.looseObject({});
export type LooseRecord = z.infer<typeof looseRecordSchema>;

/**
 * Reference data the ERP prices with (spec §2.12). Only the identity and the dates are relied on
 * (the `_id` is the stream key); the arrays (`discounts`, `pricing`, the parties) pass through as
 * sent, for the mappings to read. An element without `_id` is rejected on its own (reported),
 * never keyed by guesswork.
 */
export const customerDiscountSchema = z.looseObject({
  _id: identifier,
  createdAt: optionalDate,
  updatedAt: optionalDate,
  discounts: z.array(z.unknown()).nullable().optional(),
});
export type CustomerDiscount = z.infer<typeof customerDiscountSchema>;

export const customerRateSchema = z.looseObject({
  _id: identifier,
  createdAt: optionalDate,
  updatedAt: optionalDate,
  pricing: z.array(z.unknown()).nullable().optional(),
});
export type CustomerRate = z.infer<typeof customerRateSchema>;

/** A rule of the dynamic rates record; each rule is validated on its own. */
export const dynamicRateRuleSchema = z.looseObject({
  _id: identifier,
  name: optionalString,
  type: optionalString,
  query: z.array(z.unknown()).nullable().optional(),
});
export type DynamicRateRule = z.infer<typeof dynamicRateRuleSchema>;

/** `GET /customer-dynamic-rates` `data`: one record per account; `null` when none is set up. */
export const dynamicRatesSchema = z
  .looseObject({
    _id: identifier.optional(),
    carrier: optionalString,
    createdAt: optionalDate,
    updatedAt: optionalDate,
    rules: z.array(z.unknown()).nullable().optional(),
  })
  .nullable();
export type DynamicRates = z.infer<typeof dynamicRatesSchema>;
