import { z } from 'zod';

/** `version` is documented as `"1.0.0"`, some answers carry the number `1` (spec §2.1). */
const envelopeVersion = z.union([z.string(), z.number()]).optional();

/** Success envelope (spec §2.1). Unknown fields are kept; `data` is validated per endpoint. */
export const successEnvelopeSchema = z.looseObject({
  _object: z.string().optional(),
  self: z.string().optional(),
  version: envelopeVersion,
  count: z.coerce.number().int().nonnegative().optional().nullable(),
  data: z.unknown(),
  error: z.unknown().optional(),
  other: z.looseObject({ pageToken: z.string().nullable().optional() }).optional().nullable(),
});
export type SuccessEnvelope = z.infer<typeof successEnvelopeSchema>;

/** Error envelope (spec §2.2). */
export const errorEnvelopeSchema = z.looseObject({
  _object: z.string().optional(),
  self: z.string().optional(),
  version: envelopeVersion,
  status: z.coerce.number().int().optional(),
  message: z.unknown().optional(),
});

/**
 * Create/update customer answers wrap a second level inside `data` (spec §2.1):
 * `{ statusCode, message, data: record }`. Returns the inner record when present.
 */
export function unwrapNestedData(data: unknown): unknown {
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const inner = data as Record<string, unknown>;
    if ('statusCode' in inner && 'data' in inner) return inner.data;
  }
  return data;
}
