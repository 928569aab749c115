/**
 * The JSON text of a record's data, computed once per record object. The engine hashes each record
 * (content-hash dedup) and the mapper stores the same text as `_raw`: serialising a 5 KB load twice
 * was ~12% of a backfill's CPU. Keyed by object identity in a WeakMap, so the text lives exactly
 * as long as the record. Records are never modified after they are read from the API (sinks and the
 * mapper only read them); code that builds a changed copy makes a new object, which gets its own text.
 */
const texts = new WeakMap<object, string>();

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
 * The JSON the content hash covers, where it is not the record's own JSON: the same members in
 * another order, as pieces of a text. Elements of a list page are handed on as the API sent them
 * (the parsed object itself, its `_raw` the response text), while the content hash keeps covering
 * them in the order earlier releases hashed — zod's output order, the schema's declared fields
 * first — so the hashes state databases hold stay valid (src/api/schemas/fast-object.ts).
 * The text is `{` + the pieces joined by `,` + (`,` + `tail`) + `}`.
 */
export interface ContentPieces {
  readonly text: string;
  /** Start and end (exclusive) offsets in `text` of each piece, in pairs. */
  readonly pieces: readonly number[];
  /** Members added after the pieces (a copy with a member more: `withMember`), without braces. */
  readonly tail?: string;
}

const contents = new WeakMap<object, ContentPieces>();

/** Records how the content JSON of `data` is put together (the caller guarantees it is the hashed form). */
export function knownContentJson(data: object, form: ContentPieces): void {
  contents.set(data, form);
}

/** The pieces of `data`'s content JSON, when it is not `recordJson(data)`. */
export function contentPiecesOf(data: object): ContentPieces | undefined {
  return contents.get(data);
}

/** The JSON the content hash covers: the pieces put together, else the record's own JSON. */
export function contentJson(data: object): string {
  const form = contents.get(data);
  if (!form) return recordJson(data);
  const { text, pieces, tail } = form;
  const parts: string[] = [];
  for (let i = 0; i < pieces.length; i += 2) parts.push(text.slice(pieces[i]!, pieces[i + 1]!));
  if (tail !== undefined) parts.push(tail);
  return `{${parts.join(',')}}`;
}

/**
 * A copy of `record` with one member more (or replaced), whose content JSON is that of `record`
 * with the member at the end — what the copy's JSON was when `record` came in zod's order.
 */
export function withMember<T extends Record<string, unknown>>(record: T, key: string, value: unknown): T {
  const copy: T = { ...record, [key]: value };
  const form = contents.get(record);
  if (!form) return copy;
  // The member would take its old place (replaced), or is left out of JSON: serialise the copy.
  if (Object.prototype.hasOwnProperty.call(record, key) || value === undefined || typeof value === 'function') return copy;
  const member = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  contents.set(copy, { text: form.text, pieces: form.pieces, tail: form.tail === undefined ? member : `${form.tail},${member}` });
  return copy;
}
