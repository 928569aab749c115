import Big from 'big.js';
import { describeValue } from '../util/describe-value.js';

/** How a value with more fraction digits than the column's scale is treated. */
export type DecimalRounding = 'half-up' | 'half-even' | 'error';

export interface DecimalOptions {
  /** Fraction digits kept; undefined keeps the value's own digits. */
  readonly scale?: number | undefined;
  /** Total digits the column holds; undefined means no limit. */
  readonly precision?: number | undefined;
  readonly round: DecimalRounding;
}

/** A value a decimal or integer conversion refuses; the message names the value. */
export class DecimalError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'DecimalError';
  }
}

const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The exact decimal a value stands for. A decimal string is read digit by digit (never through a
 * float); a JSON number is read from its shortest round-trip text — the most that can be recovered
 * once `JSON.parse` produced a double (`0.1` stays `0.1`; a 17th significant digit is already gone).
 * Undefined for "no value" (an empty string: the API sends `""` for unset amounts).
 */
function toBig(value: unknown): Big | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new DecimalError(`not a finite number: ${describeValue(value)}`);
    text = String(value);
  } else if (typeof value === 'bigint') text = value.toString();
  else if (typeof value === 'string') {
    text = value.trim();
    if (text === '') return undefined;
    if (!DECIMAL_TEXT.test(text)) throw new DecimalError(`cannot parse decimal ${describeValue(value)}`);
  } else throw new DecimalError(`cannot parse decimal ${describeValue(value)}`);
  // big.js takes no leading '+'.
  return new Big(text.startsWith('+') ? text.slice(1) : text);
}

/**
 * The value as normalised decimal text (`"+0012.5"` → `"12.5"`, with scale 2 → `"12.50"`), or null
 * for an empty string. Plain notation, never an exponent; `-0` is `0`.
 */
export function toDecimalText(value: unknown, options: DecimalOptions): string | null {
  const plain = options.scale !== undefined && options.precision === undefined ? plainDecimalText(value, options.scale) : undefined;
  if (plain !== undefined) return plain;
  let big = toBig(value);
  if (big === undefined) return null;
  const { scale, precision } = options;
  if (scale !== undefined) {
    const rounded = big.round(scale, options.round === 'half-even' ? Big.roundHalfEven : Big.roundHalfUp);
    if (options.round === 'error' && !rounded.eq(big)) {
      throw new DecimalError(`decimal ${describeValue(value)} has more than ${scale} fraction digit(s)`);
    }
    big = rounded;
  }
  if (big.eq(0)) big = big.abs();
  if (precision !== undefined) {
    // Integer digits only: what the column cannot hold even after rounding.
    const integerDigits = big.abs().round(0, Big.roundDown).toFixed().replace(/^0$/, '').length;
    if (integerDigits > precision - (scale ?? 0)) {
      throw new DecimalError(`decimal ${describeValue(value)} does not fit ${precision} digits with ${scale ?? 0} after the point`);
    }
  }
  return scale !== undefined ? big.toFixed(scale) : big.toFixed();
}

/** A decimal in plain notation without a leading zero or sign other than `-`: sign, integer digits, fraction digits. */
const PLAIN_DECIMAL = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * `toDecimalText` of a common value (a JSON number or decimal text with no more fraction digits
 * than the scale: `1668`, `"12.5"`) without big.js, which cost ~2 µs per amount: the digits are
 * the same, padded to the scale. Undefined for every other value (rounding, exponents, `+`,
 * leading zeros, a negative zero, blanks): big.js decides those.
 */
function plainDecimalText(value: unknown, scale: number): string | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value);
  } else if (typeof value === 'string') text = value.trim();
  else return undefined;
  const match = PLAIN_DECIMAL.exec(text);
  if (!match) return undefined;
  const [, sign, integer, fraction = ''] = match;
  if (fraction.length > scale) return undefined;
  // `-0`, `-0.00`: big.js writes them as 0.
  if (sign && integer === '0' && /^0*$/.test(fraction)) return undefined;
  return scale === 0 ? `${sign}${integer}` : `${sign}${integer}.${fraction.padEnd(scale, '0')}`;
}

/**
 * A whole number: a JavaScript number when it is a safe integer, else its exact digits as text
 * (a bigint column takes either). A fraction is refused, never truncated (`"1.5"`); `"3.00"` is 3.
 */
export function toInteger(value: unknown): number | string | null {
  const big = toBig(value);
  if (big === undefined) return null;
  if (!big.eq(big.round(0, Big.roundDown))) throw new DecimalError(`${describeValue(value)} is not a whole number`);
  const text = big.abs().eq(0) ? '0' : big.toFixed(0);
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}
