import { ObjectSlot } from './object-slot.js';

/**
 * The JSON text of a record's data, computed once per record object. The engine hashes each record
 * (content-hash dedup) and the mapper stores the same text as `_raw`: serialising a 5 KB load twice
 * was ~12% of a backfill's CPU. Kept on the record object itself (object-slot.ts: not in a WeakMap,
 * whose values V8 kept alive longer), so the text lives exactly as long as the record. Records are never modified after they are read from the API (sinks and the
 * mapper only read them); code that builds a changed copy makes a new object, which gets its own text.
 */
const texts = new ObjectSlot<string>('freight-sync record JSON');

export function recordJson(data: object): string {
  let text = texts.get(data);
  if (text === undefined) {
    text = JSON.stringify(data);
    texts.set(data, text);
  }
  return text;
}

/**
 * Records `text` as the JSON of `data` when it is known without serialising (cut from the response
 * text, see src/api/source-json.ts). The caller guarantees it is exactly `JSON.stringify(data)`.
 */
export function knownRecordJson(data: object, text: string): void {
  texts.set(data, text);
}

/**
 * The JSON the content hash covers, where it is not the record's own JSON. Records are handed on
 * with their members in the order the API sent them (src/api/api-order.ts), and `_raw` is their
 * JSON; the content hash keeps covering them in the order earlier releases hashed — zod's output
 * order, the schema's declared fields first, then the rest as sent — so the hashes state databases
 * hold stay valid, whichever way a record was read. That text is kept in one of two forms:
 * - pieces of the response text (an element of a large list page handed on as sent): `{` + the
 *   pieces joined by `,` + (`,` + `tail`) + `}`, never joined into one string to be hashed;
 * - a view: an object whose own JSON it is (zod's output, of which the record is a reordered copy).
 */
export interface ContentPieces {
  readonly text: string;
  /** Start and end (exclusive) offsets in `text` of each piece, in pairs. */
  readonly pieces: readonly number[];
  /** Members added after the pieces (a copy with a member more: `withMember`), without braces. */
  readonly tail?: string;
}

interface ContentView {
  readonly view: object;
}

const contents = new ObjectSlot<ContentPieces | ContentView>('freight-sync content JSON');

/** Records how the content JSON of `data` is put together (the caller guarantees it is the hashed form). */
export function knownContentJson(data: object, form: ContentPieces): void {
  contents.set(data, form);
}

/** Records that the content JSON of `data` is `recordJson(view)`: the same members, in the view's order. */
export function knownContentView(data: object, view: object): void {
  contents.set(data, { view });
}

/** The pieces of `data`'s content JSON, when it is kept as pieces (else see contentJson). */
export function contentPiecesOf(data: object): ContentPieces | undefined {
  const form = contents.get(data);
  return form && 'pieces' in form ? form : undefined;
}

/** The JSON the content hash covers: the pieces put together or the view's JSON, else the record's own JSON. */
export function contentJson(data: object): string {
  const form = contents.get(data);
  if (!form) return recordJson(data);
  if ('view' in form) return recordJson(form.view);
  const { text, pieces, tail } = form;
  const parts: string[] = [];
  for (let i = 0; i < pieces.length; i += 2) parts.push(text.slice(pieces[i]!, pieces[i + 1]!));
  if (tail !== undefined) parts.push(tail);
  return `{${parts.join(',')}}`;
}

/**
 * A copy of `record` with one member more (or replaced), whose content JSON is what the same copy
 * of the record in zod's order had as JSON (what earlier releases hashed): the new member at the
 * end, a replaced one in its place.
 */
export function withMember<T extends Record<string, unknown>>(record: T, key: string, value: unknown): T {
  const copy: T = { ...record, [key]: value };
  const form = contents.get(record);
  if (!form) return copy;
  if ('pieces' in form && !Object.prototype.hasOwnProperty.call(record, key) && value !== undefined && typeof value !== 'function') {
    const member = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
    contents.set(copy, { text: form.text, pieces: form.pieces, tail: form.tail === undefined ? member : `${form.tail},${member}` });
    return copy;
  }
  // Replaced, or left out of JSON: the copy of zod's order (pieces are canonical JSON: parsed back exactly).
  const view = 'view' in form ? form.view : (JSON.parse(contentJson(record)) as object);
  contents.set(copy, { view: { ...view, [key]: value } });
  return copy;
}
