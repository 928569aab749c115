import { z } from 'zod';
import { BOOLEAN_WORDS, parseBoolean } from './boolean.js';
import { describeValue } from './describe-value.js';
import { parseIsoDuration } from './duration.js';

/*
 * zod schemas for config values that may arrive as text: `${VAR}` interpolation always produces
 * strings (`requestsPerSecond: ${RPS:-8}`, `ssl: ${DB_SSL}`). They live in src/util, not in
 * src/config, because connectors use them for their own options and may only import src/util
 * and the connector contract. Every message is a `custom` issue in plain words, which
 * src/config/format-issues.ts prints verbatim after the dotted path.
 */

/**
 * Marks a text-tolerant value schema for the JSON Schema of the config (src/config/json-schema.ts):
 * zod only sees `unknown` or a preprocess there, so the generator replaces the node by what the
 * file may really hold — including `${VAR}` text, which is interpolated before validation.
 */
export type ValueKind = 'duration' | 'boolean' | 'number' | 'integer';
export const VALUE_KIND_META = 'freightSyncValue';

/** "is required" when nothing was given, else `message`. */
export function requiredOr(ctx: z.RefinementCtx, value: unknown, message: string): void {
  ctx.addIssue({ code: 'custom', message: value === undefined ? 'is required' : message, input: value });
}

/** An ISO 8601 duration (`PT30S`, `P7D`) in the file; a number of milliseconds in the output. */
export function isoDuration() {
  return z.unknown().meta({ [VALUE_KIND_META]: 'duration' satisfies ValueKind }).transform((value, ctx): number => {
    if (typeof value === 'string') {
      const ms = parseIsoDuration(value);
      if (ms !== undefined) return ms;
      ctx.addIssue({
        code: 'custom',
        message: `expected an ISO 8601 duration, got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    requiredOr(ctx, value, `expected an ISO 8601 duration such as PT30S, got ${describeValue(value, 'yaml')}`);
    return z.NEVER;
  });
}

/** A number; text that is a plain decimal number too. Anything else is reported as found. */
export function numberValue() {
  return z
    .preprocess(
      (value) => (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value),
      z.number(),
    )
    .meta({ [VALUE_KIND_META]: 'number' satisfies ValueKind });
}

/** An integer in [min, max]; text that is a plain integer too. */
export function integerValue(min: number, max: number) {
  return z
    .preprocess(
      (value) => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value),
      z.number().int().min(min).max(max),
    )
    .meta({ [VALUE_KIND_META]: 'integer' satisfies ValueKind, minimum: min, maximum: max });
}

/** A boolean, or one of the words of src/util/boolean.ts (`yes`, `off`, `1`, …). */
export function booleanValue() {
  return z.unknown().meta({ [VALUE_KIND_META]: 'boolean' satisfies ValueKind }).transform((value, ctx): boolean => {
    const parsed = parseBoolean(value);
    if (parsed !== undefined) return parsed;
    requiredOr(ctx, value, `expected ${BOOLEAN_WORDS}, got ${describeValue(value, 'yaml')}`);
    return z.NEVER;
  });
}
