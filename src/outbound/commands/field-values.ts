import { z } from 'zod';
import { closestKey } from '../../config/closest-key.js';
import { parseBoolean } from '../../util/boolean.js';
import { describeValue } from '../../util/describe-value.js';

/*
 * Field types of command inputs. A value arrives as text from CSV (every cell a string) or typed
 * from JSON / SQL payloads; each helper accepts both spellings and reports anything else with
 * the value it found, so the ERP user sees which cell to fix. Absent fields (empty cells, null)
 * are removed before these run (see normalize-fields.ts).
 */

/** Reports a bad value; a missing one (only required fields reach here without a value) as required. */
function fail(ctx: z.RefinementCtx, message: string, value: unknown, whenMissing = 'is required'): never {
  ctx.addIssue({ code: 'custom', message: value === undefined ? whenMissing : message });
  return z.NEVER as never;
}

/** Text; a JSON/SQL number is accepted as its decimal text. */
export function text() {
  return z.unknown().transform((value, ctx): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return fail(ctx, `expected text, got ${describeValue(value)}`, value);
  });
}

/** A number; from CSV its decimal text. */
export function num() {
  return z.unknown().transform((value, ctx): number => {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n === 'number' && Number.isFinite(n)) return n;
    return fail(ctx, `expected a number, got ${describeValue(value)}`, value);
  });
}

/** Non-empty text (ids). */
export function id() {
  return text().refine((v) => v.trim() !== '', 'expected an id, got an empty value');
}

/** The project's one yes/no vocabulary (src/util/boolean.ts). */
export function bool() {
  return z.unknown().transform((value, ctx): boolean => {
    const parsed = parseBoolean(value);
    if (parsed !== undefined) return parsed;
    return fail(ctx, `expected true or false, got ${describeValue(value)}`, value);
  });
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** ISO 8601 date or date-time; sent as UTC (`…Z`), as the API's dates are (§2.6). */
export function dateTime() {
  return z.unknown().transform((value, ctx): string => {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    if (typeof value === 'string' && ISO_DATE.test(value.trim()) && !Number.isNaN(Date.parse(value.trim()))) {
      return new Date(value.trim()).toISOString();
    }
    return fail(ctx, `expected an ISO 8601 date-time such as 2024-05-01T08:00:00Z, got ${describeValue(value)}`, value);
  });
}

/** One of the spec's values; `caseInsensitive` accepts `import` for `IMPORT` (sent as spelled in the spec). */
export function oneOf<const T extends readonly string[]>(values: T, options: { caseInsensitive?: boolean } = {}) {
  return z.unknown().transform((value, ctx): T[number] => {
    if (typeof value === 'string') {
      if ((values as readonly string[]).includes(value)) return value as T[number];
      if (options.caseInsensitive) {
        const found = values.find((v) => v.toLowerCase() === value.trim().toLowerCase());
        if (found !== undefined) return found;
      }
    }
    const shown = values.map((v) => (v === '' ? '"" (empty)' : v)).join(', ');
    const hint = typeof value === 'string' ? closestKey(value, values.filter((v) => v !== '')) : undefined;
    return fail(ctx, `${describeValue(value)} is not one of ${shown}${hint ? ` (did you mean ${hint}?)` : ''}`, value, `is required (one of ${shown})`);
  });
}

/** JSON text in a CSV cell, or the value itself from JSON/SQL. */
function parseJsonText(value: unknown, ctx: z.RefinementCtx, expected: string): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    return fail(ctx, `expected ${expected} as JSON text, got ${describeValue(value)} (${(error as Error).message})`, value);
  }
}

/** Array of ids: a JSON array, JSON text of one, or `a;b;c` in a CSV cell. */
export function idList(options: { min?: number } = {}) {
  return z.unknown().transform((value, ctx): string[] => {
    let list: unknown = value;
    if (typeof value === 'string') {
      list = value.trim().startsWith('[')
        ? parseJsonText(value, ctx, 'an array of ids')
        : value.split(';').map((s) => s.trim()).filter((s) => s !== '');
    }
    if (!Array.isArray(list)) return fail(ctx, `expected a list of ids (a;b or a JSON array), got ${describeValue(value)}`, value);
    const out: string[] = [];
    list.forEach((item, index) => {
      if (typeof item === 'string' && item.trim() !== '') out.push(item.trim());
      else ctx.addIssue({ code: 'custom', path: [index], message: `expected an id, got ${describeValue(item)}` });
    });
    if (out.length < (options.min ?? 0)) ctx.addIssue({ code: 'custom', message: 'expected at least one id, got an empty list' });
    return out;
  });
}

/** Array of anything (objects such as pricing lines): a JSON array or JSON text of one. */
export function jsonArray<T extends z.ZodType>(element?: T) {
  return z.unknown().transform((value, ctx): unknown[] => {
    const list = parseJsonText(value, ctx, 'an array');
    if (!Array.isArray(list)) return fail(ctx, `expected a JSON array, got ${describeValue(value)}`, value);
    if (!element) return list;
    const out: unknown[] = [];
    list.forEach((item, index) => {
      const parsed = element.safeParse(item);
      if (parsed.success) out.push(parsed.data);
      else for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: [index, ...issue.path.map(String)], message: issue.message });
    });
    return out;
  });
}

/** One JSON object, or JSON text of one. */
export function jsonObject<T extends z.ZodType>(shape: T) {
  return z.unknown().transform((value, ctx): unknown => {
    if (value === undefined) return fail(ctx, '', value);
    const parsed = parseJsonText(value, ctx, 'an object');
    const result = shape.safeParse(parsed);
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', path: issue.path.map(String), message: issue.message });
    return z.NEVER;
  });
}

/** An item of an array whose shape the spec does not give: objects or text (emails, ids). */
export const anyItem = z.unknown();
