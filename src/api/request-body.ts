import { randomBytes } from 'node:crypto';
import type { ApiVariant } from './variant.js';

/**
 * How request bodies travel (config `api.requestEncoding`). Spec §5.2: main takes
 * `application/json` ("recommended"), brokerage is "stated as `multipart/form-data`".
 */
export const REQUEST_ENCODINGS = ['json', 'multipart'] as const;
export type RequestEncoding = (typeof REQUEST_ENCODINGS)[number];

/**
 * Multipart on brokerage because §5.2 states it there; JSON on main, which §5.2 recommends (and
 * multipart could not carry main's typed fields any better).
 */
export function defaultRequestEncoding(variant: ApiVariant): RequestEncoding {
  return variant === 'brokerage' ? 'multipart' : 'json';
}

export interface EncodedBody {
  data: string | Buffer | FormData;
  /** Undefined for FormData: the HTTP library writes the header with its boundary. */
  contentType: string | undefined;
}

/**
 * Encodes a call's body. A FormData (document uploads, §4.4 and §4.7: always multipart) goes as
 * it is, whatever the encoding. A plain object goes as JSON, or as multipart/form-data with one
 * part per top-level field:
 * - a string is a plain text part, exactly as a browser form sends it;
 * - every other value (boolean, number, null, array, object) is its JSON text in a part marked
 *   `Content-Type: application/json` — the OpenAPI default for structured multipart fields. It is
 *   lossless (an empty array, `null`, `false` and the string "false" stay distinct) and
 *   self-describing, so a server needs no per-field schema to decode it;
 * - an undefined field is left out, as JSON.stringify does.
 * The body is built here rather than with FormData because FormData cannot give a non-file part
 * a content type.
 */
export function encodeRequestBody(body: unknown, encoding: RequestEncoding): EncodedBody {
  if (typeof FormData !== 'undefined' && body instanceof FormData) return { data: body, contentType: undefined };
  if (encoding === 'json' || !isPlainObject(body)) return { data: JSON.stringify(body), contentType: 'application/json' };
  return encodeMultipart(body);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function encodeMultipart(fields: Record<string, unknown>): EncodedBody {
  const parts: Array<{ name: string; text: string; json: boolean }> = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (typeof value === 'string') parts.push({ name, text: value, json: false });
    else if (value instanceof Date) parts.push({ name, text: value.toISOString(), json: false });
    else parts.push({ name, text: JSON.stringify(value), json: true });
  }
  let boundary = newBoundary();
  // A random boundary inside a value is practically impossible; checking keeps it impossible.
  while (parts.some((p) => p.text.includes(boundary))) boundary = newBoundary();
  const chunks: string[] = [];
  for (const part of parts) {
    chunks.push(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(part.name)}"\r\n`);
    if (part.json) chunks.push('Content-Type: application/json\r\n');
    chunks.push(`\r\n${part.text}\r\n`);
  }
  chunks.push(`--${boundary}--\r\n`);
  return { data: Buffer.from(chunks.join(''), 'utf8'), contentType: `multipart/form-data; boundary=${boundary}` };
}

function newBoundary(): string {
  return `----freight-sync-${randomBytes(12).toString('hex')}`;
}

/** The HTML form encoding of a name in Content-Disposition (quotes and line breaks percent-encoded). */
function escapeName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
