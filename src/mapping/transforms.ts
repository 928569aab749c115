import Big from 'big.js';
import { DateTime } from 'luxon';
import { BOOLEAN_WORDS, parseBoolean } from '../util/boolean.js';
import { getAtSegments } from './path.js';
import { describeValue } from '../util/describe-value.js';
import type { Cell, CompiledTransform } from './compile-mapping.js';
import { DecimalError, toDecimalText, toInteger } from './decimal.js';
import { formatUtcFast, parseIsoFast } from './iso-date.js';

/** A value a transform cannot convert; the mapper adds stream, key and column to the message. */
export class TransformError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'TransformError';
  }
}

const isMissing = (value: unknown): value is null | undefined => value === null || value === undefined;

/** Runs the chain left to right. Missing input stays missing except through `constant` and `default`. */
export function applyTransforms(input: unknown, transforms: readonly CompiledTransform[]): unknown {
  let value = input;
  for (const transform of transforms) value = applyOne(value, transform);
  return value;
}

function applyOne(value: unknown, transform: CompiledTransform): unknown {
  switch (transform.type) {
    case 'constant':
      return transform.value;
    case 'default':
      return isMissing(value) ? transform.value : value;
    case 'json':
      return value === undefined ? null : JSON.stringify(value);
    default:
      if (isMissing(value)) return null;
  }
  switch (transform.type) {
    case 'date':
      return convertDate(value, transform.format, transform.timeZone);
    case 'number':
      return toNumber(value, transform.decimals, transform.fixed);
    case 'decimal':
      return exact(() => toDecimalText(value, transform));
    case 'integer':
      return exact(() => toInteger(value));
    case 'boolean':
      if (typeof value === 'string' && value.trim() === '') return null;
      return toBoolean(value) ? transform.true : transform.false;
    case 'join':
      return join(value, transform.separator, transform.elementPath);
    case 'sum':
      return sum(elementsOf(value, transform.elementPath));
    case 'same':
      return same(elementsOf(value, transform.elementPath));
    case 'ref':
      return ref(value, transform.field, transform.separator);
    case 'string': {
      const text = toText(value);
      return transform.trim ? text.trim() : text;
    }
  }
}

/** ISO 8601 texts take the fast path (the API's dates); luxon handles every other shape, zone and format. */
function convertDate(value: unknown, format: string, timeZone: string): string | number {
  const text = typeof value === 'string' ? value.trim() : '';
  const millis = text === '' ? undefined : parseIsoFast(text);
  if (millis === undefined) return formatDate(parseDate(value), format, timeZone);
  const fast = timeZone === 'UTC' ? formatUtcFast(millis, format, text) : undefined;
  return fast ?? formatDate(DateTime.fromMillis(millis, { zone: 'utc' }), format, timeZone);
}

function parseDate(value: unknown): DateTime {
  let parsed: DateTime | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) parsed = DateTime.fromMillis(value, { zone: 'utc' });
  else if (typeof value === 'string' && value.trim() !== '') {
    const text = value.trim();
    parsed = DateTime.fromISO(text, { zone: 'utc', setZone: true });
    if (!parsed.isValid) parsed = DateTime.fromRFC2822(text, { zone: 'utc', setZone: true });
    if (!parsed.isValid) parsed = DateTime.fromHTTP(text, { zone: 'utc', setZone: true });
    if (!parsed.isValid) parsed = DateTime.fromSQL(text, { zone: 'utc', setZone: true });
  }
  if (!parsed || !parsed.isValid) throw new TransformError(`cannot parse date ${describeValue(value)}`);
  return parsed;
}

function formatDate(date: DateTime, format: string, timeZone: string): string | number {
  const zoned = date.setZone(timeZone);
  switch (format) {
    case 'iso':
      return zoned.toISO({ suppressMilliseconds: false }) ?? '';
    case 'isoDate':
      return zoned.toISODate() ?? '';
    case 'epochMillis':
      return zoned.toMillis();
    default:
      return zoned.toFormat(format);
  }
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function toNumber(value: unknown, decimals: number | undefined, fixed: boolean): number | string | null {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string') {
    const text = value.trim().replace(/_/g, '');
    // An empty amount (the API sends `""` for some unset decimal strings) is "no value", not zero.
    if (text === '') return null;
    if (!DECIMAL.test(text)) throw new TransformError(`cannot parse number ${describeValue(value)}`);
    n = Number(text);
  } else throw new TransformError(`cannot parse number ${describeValue(value)}`);
  if (!Number.isFinite(n)) throw new TransformError(`cannot parse number ${describeValue(value)}`);
  if (decimals === undefined) return n;
  // Round half away from zero on the decimal representation, not on binary floats (1.005 → 1.01).
  const rounded = Math.sign(n) * Number(`${Math.round(Number(`${Math.abs(n)}e${decimals}`))}e-${decimals}`);
  return fixed ? rounded.toFixed(decimals) : rounded;
}

/** Decimal and integer conversions report through the mapper like every other transform. */
function exact<T>(convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof DecimalError) throw new TransformError(error.message);
    throw error;
  }
}

function toBoolean(value: unknown): boolean {
  const parsed = parseBoolean(value);
  if (parsed !== undefined) return parsed;
  throw new TransformError(`cannot parse boolean ${describeValue(value)} (expected ${BOOLEAN_WORDS})`);
}

function join(value: unknown, separator: string, elementPath: CompiledTransform['elementPath']): string {
  const items = Array.isArray(value) ? value : [value];
  return items
    .map((item) => (elementPath ? getAtSegments(item, elementPath) : item))
    // Missing elements keep their position (empty text) so the joined list lines up with the source.
    .map((item) => (isMissing(item) ? '' : toText(item)))
    .join(separator);
}

/** An array's elements (a single value counts as one), each read at `elementPath` when given. */
function elementsOf(value: unknown, elementPath: CompiledTransform['elementPath']): unknown[] {
  const items = Array.isArray(value) ? value : [value];
  return elementPath ? items.map((item) => getAtSegments(item, elementPath)) : items;
}

/**
 * Adds decimal strings and JSON numbers exactly (big.js), keeping the widest scale of the inputs
 * (`"0.10"` + `"0.20"` is `"0.30"`). Any missing element makes the sum missing: a total over part of
 * the entries would be a wrong amount that looks right.
 */
function sum(values: readonly unknown[]): string | null {
  if (values.length === 0) return null;
  let total = new Big(0);
  let scale = 0;
  for (const value of values) {
    const text = decimalText(value);
    if (text === null) return null;
    total = total.plus(new Big(text));
    scale = Math.max(scale, decimalScale(text));
  }
  return total.toFixed(scale);
}

function decimalText(value: unknown): string | null {
  if (isMissing(value)) return null;
  // A JSON number's shortest text is the text the API sent for any amount with up to 15 significant digits.
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (text === '') return null;
  if (text === undefined || !DECIMAL.test(text)) throw new TransformError(`cannot add ${describeValue(value)}: not a decimal number`);
  return text;
}

function decimalScale(text: string): number {
  const [mantissa = '', exponent = '0'] = text.toLowerCase().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

/** The value every present element agrees on; null when none is present or two differ. */
function same(values: readonly unknown[]): unknown {
  let found: { value: unknown; text: string } | undefined;
  for (const value of values) {
    if (isMissing(value) || value === '') continue;
    const text = JSON.stringify(value);
    if (found === undefined) found = { value, text };
    else if (found.text !== text) return null;
  }
  return found === undefined ? null : found.value;
}

function ref(value: unknown, field: string, separator: string): unknown {
  if (Array.isArray(value)) {
    const ids = value.map((item) => idOf(item, field)).filter((id) => !isMissing(id) && id !== '');
    return ids.length === 0 ? null : ids.map(toText).join(separator);
  }
  return idOf(value, field);
}

function idOf(value: unknown, field: string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) throw new TransformError(`expected an id or an object with "${field}", got ${describeValue(value)}`);
  return Object.hasOwn(value, field) ? ((value as Record<string, unknown>)[field] ?? null) : null;
}

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/**
 * Turns a transformed value into a cell. Objects and arrays without a `json` transform are stored
 * as JSON text rather than dropped, so an unexpected shape never loses data.
 */
export function toCell(value: unknown): Cell {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TransformError(`not a finite number: ${String(value)}`);
    return value;
  }
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}
