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
