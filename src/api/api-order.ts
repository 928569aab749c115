import { knownContentView } from '../util/record-json.js';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

/**
 * A resource record with its members in the order the API sent them. zod's output puts the
 * schema's declared fields first; a record is handed on in the API's order instead, on every path
 * (an element of a large list page as sent, src/api/schemas/fast-object.ts; here a small page's
 * element, one zod parsed, a record read by reference), so `_raw` — the record's JSON — is the
 * same text for a version however it was read: a replay after a failover that reads it another
 * way writes the very same row to a file drop (cluster chaos, seed 36017).
 *
 * `output` is the schema's output for `input`. Its members present in `input` come in `input`'s
 * order, then any others (made by a transform) in `output`'s. When that is `output`'s own order,
 * `output` is returned; else a copy, whose content hash keeps covering `output`'s JSON
 * (record-json.ts): the hash earlier releases stored.
 */
export function inApiOrder<T>(output: T, input: unknown): T {
  if (output === input || !isPlainObject(output) || !isPlainObject(input)) return output;
  const outputKeys = Object.keys(output);
  const ordered: string[] = [];
  for (const key of Object.keys(input)) if (Object.prototype.hasOwnProperty.call(output, key)) ordered.push(key);
  if (ordered.length < outputKeys.length) for (const key of outputKeys) if (!Object.prototype.hasOwnProperty.call(input, key)) ordered.push(key);
  let same = true;
  for (let i = 0; same && i < ordered.length; i++) same = ordered[i] === outputKeys[i];
  if (same) return output;
  const copy: Record<string, unknown> = {};
  // `__proto__` is never among them: zod leaves that key out of its output.
  for (const key of ordered) copy[key] = output[key];
  knownContentView(copy, output);
  return copy as T;
}
