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
 * text, see src/api/source-json.ts). The caller guarantees it is exactly `JSON.stringify(data)`,
 * or, for a list element kept as the API sent it, that of zod's output of it: the same members in
 * zod's order (src/api/schemas/fast-object.ts keptAsSent).
 */
export function knownRecordJson(data: object, text: string): void {
  texts.set(data, text);
}

/**
 * A copy of `record` with one member more, whose JSON is `record`'s known text with the member at
 * the end: the copy's JSON as when `record` itself was in that text's order (a list element kept
 * as the API sent it has zod's order as its text, src/api/schemas/fast-object.ts), so `_raw` and
 * the content hash of a marked record stay what they were.
 */
export function withMember<T extends Record<string, unknown>>(record: T, key: string, value: unknown): T {
  const copy: T = { ...record, [key]: value };
  const text = texts.get(record);
  // A member the record has keeps its place, and one JSON leaves out is not written: serialise the copy.
  if (text === undefined || Object.prototype.hasOwnProperty.call(record, key) || value === undefined || typeof value === 'function') return copy;
  const member = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  texts.set(copy, text === '{}' ? `{${member}}` : `${text.slice(0, -1)},${member}}`);
  return copy;
}
