import { controlEscape, isIndexLike, newElementForm, noteSourceJson, numberEnd, shortEscape, type ElementForm } from './source-json.js';

export type JsonParse = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Above this many bytes a body is parsed in pieces. V8 keeps a string over 128 KiB (64 Ki
 * characters when it holds non-Latin-1 text) in its own freshly mapped memory: a list page of 50
 * loads is ~290 KB, and decoding it to one string cost ~2 ms of page faults per page on a VM —
 * more than parsing it. The pieces (the envelope, and each element of its `data` array) are
 * ordinary small strings.
 */
const PIECEWISE_FROM = 64 * 1024;

/** A UTF-8 response body as text, the way the HTTP client always decoded it (a leading BOM dropped). */
export function decodeBody(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * JSON.parse of a UTF-8 response body. The result (and for invalid JSON, the reason) is exactly
 * that of `JSON.parse(decodeBody(bytes))`: a large envelope `{ …, "data": [ … ] }` is split at its
 * elements and each piece parsed by JSON.parse; anything the split does not handle plainly — no
 * `data` array, a second or escaped `data` key, a piece that does not parse — goes the whole-text
 * way, which also gives the error message.
 */
export function parseJsonBody(bytes: Buffer, scanned?: ListScan): JsonParse {
  if (bytes.length >= PIECEWISE_FROM) {
    const value = parsePiecewise(bytes, scanned);
    if (value !== undefined) return { ok: true, value };
  }
  const body = decodeBody(bytes);
  if (body.trim() === '') return { ok: false, reason: 'empty body' };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, reason: `body is not valid JSON (${error instanceof Error ? error.message : 'parse error'})` };
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const isSpace = (byte: number | undefined): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** Where the top-level `data` array is: its brackets and each element's byte range (untrimmed). */
interface DataArray {
  open: number;
  close: number;
  /** Start and end (exclusive) of each element, in pairs; separators (commas) excluded. */
  cuts: number[];
  /** The form of each element's text (see source-json.ts), one per pair of cuts. */
  forms: ElementForm[];
}

/**
 * Where the elements of a large envelope's `data` array are, found by one scan of its bytes
 * (findDataArray); undefined when the body is small or not split that way. The scan is kept so
 * the parse does not repeat it (a reader may look at the last elements first: ListPeek).
 */
export interface ListScan {
  readonly bytes: Buffer;
  /** Where the envelope's text starts (after a BOM and whitespace). */
  readonly from: number;
  readonly found: DataArray;
  /**
   * Elements already parsed by `parseScannedElement` (a peek), by index: the page's parse takes
   * them instead of parsing their text again. Peeked elements are read, never changed.
   */
  readonly parsed: Map<number, unknown>;
}

export function scanListBody(bytes: Buffer): ListScan | undefined {
  if (bytes.length < PIECEWISE_FROM) return undefined;
  let from = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (isSpace(bytes[from])) from += 1;
  if (bytes[from] !== OPEN_OBJECT) return undefined;
  const found = findDataArray(bytes, from);
  return found ? { bytes, from, found, parsed: new Map() } : undefined;
}

/** Number of elements the scan found (`[ ]` has none). */
export function scannedElementCount(scan: ListScan): number {
  const { cuts } = scan.found;
  if (cuts.length === 2 && elementRange(scan, 0) === undefined) return 0;
  return cuts.length / 2;
}

/**
 * JSON.parse of element `index` alone (not noted as source JSON), or undefined if it is empty or
 * does not parse. The value is kept for the page's parse (ListScan.parsed): the caller must not change it.
 */
export function parseScannedElement(scan: ListScan, index: number): unknown {
  if (scan.parsed.has(index)) return scan.parsed.get(index);
  const range = elementRange(scan, index);
  if (!range) return undefined;
  try {
    const value = JSON.parse(scan.bytes.toString('utf8', range[0], range[1])) as unknown;
    scan.parsed.set(index, value);
    return value;
  } catch {
    return undefined;
  }
}

/** Byte range of element `index` without surrounding whitespace; undefined when it is empty. */
function elementRange(scan: ListScan, index: number): [number, number] | undefined {
  const { bytes } = scan;
  let start = scan.found.cuts[2 * index]!;
  let end = scan.found.cuts[2 * index + 1]!;
  while (start < end && isSpace(bytes[start])) start += 1;
  while (end > start && isSpace(bytes[end - 1])) end -= 1;
  return start === end ? undefined : [start, end];
}

/**
 * The envelope parsed piecewise, or undefined to parse it whole. Every byte is in exactly one
 * piece that JSON.parse checks (the envelope with `[]` for data, each element) or is whitespace
 * or a single comma between elements, so valid pieces mean the whole text is valid, with the same value.
 */
export function parsePiecewise(bytes: Buffer, scanned?: ListScan): unknown {
  const scan = scanned?.bytes === bytes ? scanned : scanListBody(bytes);
  if (!scan) return undefined;
  const { from, found } = scan;
  const items: unknown[] = [];
  try {
    const { cuts } = found;
    for (let i = 0; i < cuts.length; i += 2) {
      const range = elementRange(scan, i / 2);
      // `[ ]` is an empty array; an empty element (`[1,,2]`, `[1,]`) is invalid: the whole-text parse says why.
      if (!range) {
        if (cuts.length === 2) break;
        return undefined;
      }
      const [start, end] = range;
      const text = bytes.toString('utf8', start, end);
      // An element a peek parsed already is the same value (parsed from the same text, unchanged).
      const item: unknown = scan.parsed.has(i / 2) ? scan.parsed.get(i / 2) : JSON.parse(text);
      noteSourceJson(item, text, found.forms[i / 2]!, bytes, start, end);
      items.push(item);
    }
    const envelope: unknown = JSON.parse(bytes.toString('utf8', from, found.open + 1) + bytes.toString('utf8', found.close, bytes.length));
    if (envelope === null || typeof envelope !== 'object' || !Array.isArray((envelope as { data?: unknown }).data)) return undefined;
    (envelope as { data: unknown }).data = items;
    return envelope;
  } catch {
    return undefined;
  }
}

/**
 * The keys of the objects open inside an element, to find a key given twice in one object:
 * JSON.parse keeps one (the last value, at the first one's place), so the text is not the value's
 * JSON. Nested objects are small; the element's own keys are counted instead (noteSourceJson).
 */
class OpenObjectKeys {
  private readonly from: number[] = [];
  private readonly to: number[] = [];
  /** Index in from/to of the first key of the object open at each depth. */
  private readonly base: number[] = [];
  private top = 0;

  open(depth: number): void {
    this.base[depth] = this.top;
  }

  close(depth: number): void {
    if (this.base[depth] !== undefined) this.top = this.base[depth]!;
  }

  /** Notes the key between `start` and `end` (its quotes) of the object at `depth`; false if that object has it already. */
  add(bytes: Buffer, start: number, end: number, depth: number): boolean {
    const { from, to } = this;
    const length = end - start;
    for (let k = this.base[depth]!; k < this.top; k++) {
      if (to[k]! - from[k]! !== length) continue;
      let same = true;
      for (let b = 1; same && b < length; b++) same = bytes[from[k]! + b] === bytes[start + b];
      if (same) return false;
    }
    from[this.top] = start;
    to[this.top] = end;
    this.top += 1;
    return true;
  }

  reset(): void {
    this.top = 0;
  }
}

const keys = new OpenObjectKeys();

/**
 * Where the current element's members start, reused from element to element: each element's
 * form gets an array of exactly its count. Pushed to a new array per element, a load's ~100
 * starts grew it four times (~2 KB of garbage per load).
 */
const memberStarts: number[] = [];

/**
 * Scans the envelope's structure (strings skipped, brackets counted) for its one `"data": [`
 * key at the top level and the commas between that array's elements. Undefined when there is
 * none, more than one, or a top-level key with an escape (it could spell `data`). On the way it
 * notes each element's form (source-json.ts): whether its text is exactly its JSON.
 */
function findDataArray(bytes: Buffer, from: number): DataArray | undefined {
  const length = bytes.length;
  let depth = 0;
  let found: DataArray | undefined;
  let inData = false;
  let elementStart = 0;
  const cuts: number[] = [];
  const forms: ElementForm[] = [];
  let form = newElementForm();
  let memberCount = 0;
  keys.reset();
  for (let i = from; i < length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      const start = i;
      // The closing quote (a backslash escapes the byte after it). A loop here, not indexOf: most
      // strings are a few bytes, shorter than a call into native code costs.
      let end = i + 1;
      if (inData) {
        // In an element: escapes checked and multi-byte characters counted for its form too.
        for (;;) {
          if (end >= length) return undefined;
          const inner = bytes[end]!;
          if (inner === QUOTE) break;
          if (inner === BACKSLASH) {
            if (!shortEscape(bytes[end + 1]!) && !controlEscape(bytes, end)) form.canonical = false;
            end += 2;
          } else {
            if (inner >= 0x80) {
              if (inner < 0xc0) form.shift += 1;
              else if (inner >= 0xf0) form.shift -= 1;
            }
            end += 1;
          }
        }
        i = end;
        if (bytes[end + 1] === COLON) {
          // A key of an element's object (at any depth).
          if (isIndexLike(bytes, start + 1, end)) form.canonical = false;
          if (depth === 3) memberStarts[memberCount++] = start - form.shift;
          else if (form.canonical) form.canonical = keys.add(bytes, start, end, depth);
        }
        continue;
      }
      for (;;) {
        if (end >= length) return undefined;
        const inner = bytes[end]!;
        if (inner === QUOTE) break;
        end += inner === BACKSLASH ? 2 : 1;
      }
      i = end;
      if (depth !== 1) continue;
      let next = end + 1;
      while (isSpace(bytes[next])) next += 1;
      if (bytes[next] !== COLON) continue;
      // A top-level key.
      for (let k = start + 1; k < end; k++) if (bytes[k] === BACKSLASH) return undefined;
      if (end - start !== 5 || bytes[start + 1] !== 0x64 || bytes[start + 2] !== 0x61 || bytes[start + 3] !== 0x74 || bytes[start + 4] !== 0x61) continue;
      if (found) return undefined;
      next += 1;
      while (isSpace(bytes[next])) next += 1;
      if (bytes[next] !== OPEN_ARRAY) return undefined;
      found = { open: next, close: -1, cuts, forms };
      inData = true;
      elementStart = next + 1;
      depth = 2;
      i = next;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (inData && byte === OPEN_OBJECT) keys.open(depth);
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (inData && byte === CLOSE_OBJECT) keys.close(depth);
      if (inData && depth === 2) {
        if (byte !== CLOSE_ARRAY) return undefined;
        cuts.push(elementStart, i);
        form.starts = memberStarts.slice(0, memberCount);
        forms.push(form);
        found!.close = i;
        inData = false;
      }
      depth -= 1;
      if (depth < 0) return undefined;
    } else if (byte === COMMA && inData && depth === 2) {
      cuts.push(elementStart, i);
      form.starts = memberStarts.slice(0, memberCount);
      memberCount = 0;
      forms.push(form);
      form = newElementForm();
      elementStart = i + 1;
    } else if (inData && depth > 2) {
      // Inside an element, between its strings: numbers as JavaScript prints them, no whitespace.
      if ((byte >= 0x30 && byte <= 0x39) || byte === 0x2d) {
        const after = numberEnd(bytes, i, length);
        if (after < 0) form.canonical = false;
        else i = after - 1;
      } else if (isSpace(byte)) form.canonical = false;
    }
  }
  return found && found.close >= 0 && depth === 0 ? found : undefined;
}
