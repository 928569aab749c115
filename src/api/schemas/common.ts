import { z } from 'zod';

/**
 * Field types that tolerate the spec's looseness: an optional field may be missing or null, a
 * number may arrive as a decimal string. A missing optional field must never break a sync, so
 * resource schemas declare only what the daemon relies on and keep every other field as is.
 */
export const optionalString = z.string().nullable().optional();
// A date the daemon orders or versions by: text that does not parse would become a record's
// version and break "newer wins" in the sinks, so such an element is quarantined instead.
export const optionalDate = z
  .string()
  .refine((s) => s === '' || !Number.isNaN(Date.parse(s)), { message: 'expected an ISO 8601 date-time' })
  .nullable()
  .optional();
/** A required, non-empty text (a load's `reference_number`). */
export const requiredString = z.string().min(1);
export const optionalBoolean = z.boolean().nullable().optional();
export const optionalNumber = z.union([z.number(), z.string()]).nullable().optional();
/** Identifiers are strings in the spec; some event ids are numbers (§6.2). */
export const identifier = z.union([z.string().min(1), z.number()]).transform((value) => String(value));
