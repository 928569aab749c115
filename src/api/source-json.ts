import { isUtf8 } from 'node:buffer';
import { ObjectSlot } from '../util/object-slot.js';

/**
 * The text a list element was parsed from, kept when it is exactly `JSON.stringify` of the parsed
 * value: a record's JSON (its content hash and `_raw`) is then cut from that text instead of
 * serialising the record again (~25 µs per load, ~1.3 ms per 50-load page). The page's scan for
 * its elements (json-body.ts) checks their form on the way. The simulator, and any server that
 * writes JSON with `JSON.stringify`, sends such text; for any other (whitespace, `1.0`, `\u00e9`,
 * `\/`, duplicate keys…) nothing is kept and the record is serialised as before. Either way the
 * text is the same: test/unit/api-source-json.test.ts compares them.
 */

/** What is kept of an element: its text and where each of its top-level members starts in it. */
export interface SourceJson {
  readonly text: string;
  /** Offset (UTF-16 units) of each member's opening quote, in member order (the parsed object's key order). */
  readonly starts: readonly number[];
}

/** Kept on the parsed element itself (object-slot.ts: in a WeakMap, V8 kept the texts alive longer). */
const sources = new ObjectSlot<SourceJson>('freight-sync source JSON');

/**
 * What the scan of a page found out about one element's text: whether its form is the one
 * JSON.stringify writes (no whitespace between tokens, and the rules of `shortEscape`,
 * `controlEscape`, `isIndexLike` and `numberEnd`, no key twice in a nested object), and where its
 * top-level members start.
 */
export interface ElementForm {
  canonical: boolean;
  /** Bytes minus UTF-16 units so far: a character of 2 or 3 bytes is one unit, of 4 bytes two. */
  shift: number;
  /** Byte offset minus `shift` of each top-level member's opening quote (set when the element's scan ends). */
  starts: number[];
}

export const newElementForm = (): ElementForm => ({ canonical: true, shift: 0, starts: [] });

/**
 * Keeps `text` for `value` (what `JSON.parse(text)` gave; `text` decoded from `bytes` between
 * `from` and `to`, whose form the scan found) when it is exactly `JSON.stringify(value)` and
 * `value` is a plain object.
 */
export function noteSourceJson(value: unknown, text: string, form: ElementForm, bytes: Buffer, from: number, to: number): void {
  if (!form.canonical || value === null || typeof value !== 'object' || Array.isArray(value)) return;
  // Offsets in the text are right only if the bytes decode without replacement characters.
  if (form.shift !== 0 && !isUtf8(bytes.subarray(from, to))) return;
  // JSON.parse keeps the last of duplicate keys (at the first one's place): fewer keys than
  // members. The scan compared the keys of nested objects; the element's own are counted here
  // (as for…in lists them: no array of a load's ~100 keys made per element).
  if (form.starts.length !== ownKeyCount(value)) return;
  const starts = form.starts;
  for (let i = 0; i < starts.length; i++) starts[i]! -= from;
  sources.set(value, { text, starts });
}

/** The keys `for…in` lists for `value` (its own, for anything JSON.parse made). */
function ownKeyCount(value: object): number {
  let count = 0;
  for (const _key in value) count += 1;
  return count;
}

/** The text `value` was parsed from, when it is exactly its JSON (see noteSourceJson). */
export function sourceJsonOf(value: object): SourceJson | undefined {
  return sources.get(value);
}

/** The runs of consecutive source members in `order`, as pairs of the first and last member's source position. */
export function memberRuns(order: readonly number[]): number[] {
  const runs: number[] = [];
  for (let i = 0; i < order.length; ) {
    const first = order[i]!;
    let last = first;
    i += 1;
    while (i < order.length && order[i] === last + 1) {
      last += 1;
      i += 1;
    }
    runs.push(first, last);
  }
  return runs;
}

/** Start and end offsets in the source text of each run of members (a member ends at the comma before the next). */
export function memberPieces(source: SourceJson, runs: readonly number[]): number[] {
  const { text, starts } = source;
  const count = starts.length;
  const pieces = new Array<number>(runs.length);
  for (let r = 0; r < runs.length; r += 2) {
    const last = runs[r + 1]!;
    pieces[r] = starts[runs[r]!]!;
    pieces[r + 1] = last + 1 < count ? starts[last + 1]! - 1 : text.length - 1;
  }
  return pieces;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;

/** `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`: JSON.stringify writes these characters so. */
export const shortEscape = (escaped: number): boolean =>
  escaped === QUOTE || escaped === BACKSLASH || escaped === 0x62 || escaped === 0x66 || escaped === 0x6e || escaped === 0x72 || escaped === 0x74;

/** `\u00xx` at `at`, lower-case hex, for a control character that has no short escape. */
export function controlEscape(bytes: Buffer, at: number): boolean {
  if (bytes[at + 1] !== 0x75 || bytes[at + 2] !== 0x30 || bytes[at + 3] !== 0x30) return false;
  const high = bytes[at + 4]!;
  const low = bytes[at + 5]!;
  if (high !== 0x30 && high !== 0x31) return false;
  if (!isDigit(low) && !(low >= 0x61 && low <= 0x66)) return false;
  return !(high === 0x30 && (low === 0x38 || low === 0x39 || low === 0x61 || low === 0x63 || low === 0x64));
}

/** A key of digits only (conservatively: every array index is one). */
export function isIndexLike(bytes: Buffer, from: number, to: number): boolean {
  if (from === to) return false;
  for (let k = from; k < to; k++) if (!isDigit(bytes[k]!)) return false;
  return true;
}

/**
 * Past the number at `at` if JavaScript prints it that way, or -1. Plain forms are known by their
 * digits: an integer or a decimal without a trailing zero of at most 15 digits (every such decimal
 * is the shortest text of its double), no `-0`, at most five zeros after `0.` (below 1e-6 JavaScript
 * writes an exponent). Anything else (17-digit doubles, exponents) is compared with String(Number()).
 */
export function numberEnd(bytes: Buffer, at: number, end: number): number {
  let i = at;
  const negative = bytes[i] === 0x2d;
  if (negative) i += 1;
  const intStart = i;
  while (i < end && isDigit(bytes[i]!)) i += 1;
  const intDigits = i - intStart;
  if (intDigits === 0) return -1;
  const zero = intDigits === 1 && bytes[intStart] === 0x30;
  let plain = intDigits === 1 || bytes[intStart] !== 0x30;
  let digits = intDigits;
  if (bytes[i] === 0x2e) {
    i += 1;
    const fractionStart = i;
    while (i < end && isDigit(bytes[i]!)) i += 1;
    if (i === fractionStart) return -1;
    digits += i - fractionStart;
    if (bytes[i - 1] === 0x30) plain = false;
    if (zero) {
      let zeros = 0;
      while (bytes[fractionStart + zeros] === 0x30) zeros += 1;
      if (zeros > 5) plain = false;
    }
  } else if (zero && negative) plain = false;
  const exponent = bytes[i];
  if (exponent === 0x65 || exponent === 0x45) {
    plain = false;
    i += 1;
    const sign = bytes[i];
    if (sign === 0x2b || sign === 0x2d) i += 1;
    const exponentStart = i;
    while (i < end && isDigit(bytes[i]!)) i += 1;
    if (i === exponentStart) return -1;
  }
  if (plain && digits <= 15) return i;
  const number = bytes.toString('latin1', at, i);
  return String(Number(number)) === number ? i : -1;
}
