import crypto from 'node:crypto';
import { contentJson, contentPiecesOf, type ContentPieces } from '../util/record-json.js';

/**
 * The hash of a record's content. Records re-read through overlapping windows (lookback) are
 * delivered again only when this hash changed.
 *
 * It hashes the record's JSON in zod's key order (the schema's declared fields first, then the
 * rest as the server sent them), with the native JSON.stringify or pieces of the response text
 * (record-json.ts contentJson): a canonical form with sorted keys cost ~100 µs per load and was
 * the largest CPU cost of a backfill. The server writes a given version of a document the same
 * way every time, so equal content hashes equal; if it ever reordered keys, the price is one
 * harmless re-delivery of an unchanged record to idempotent sinks — never a lost change.
 */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'base64url') => string }).hash;

/**
 * The UTF-8 bytes of `op \0 json` are written here and hashed: hashing the concatenated string
 * made V8 copy every record's JSON (~6 KB) into a new flat string first, per record. Reused; a
 * record too large for it is hashed as text (same bytes, same hash).
 */
const SCRATCH_BYTES = 256 * 1024;
let scratch: Buffer | undefined;

export function contentHash(op: string, data: unknown): string {
  const isRecord = data !== null && typeof data === 'object' && !Array.isArray(data);
  const pieces = isRecord ? contentPiecesOf(data) : undefined;
  if (pieces && oneShot && (op.length + 3 + pieces.text.length + (pieces.tail?.length ?? 0)) * 3 <= SCRATCH_BYTES) return hashPieces(op, pieces);
  // A record's text is kept for the mapper's `_raw` (serialised once per record, see recordJson).
  const json = (isRecord ? contentJson(data) : JSON.stringify(data)) ?? 'null';
  // crypto.hash (Node ≥ 20.12) skips the Hash object; older Node falls back.
  if (!oneShot) return crypto.createHash('sha1').update(`${op}\u0000${json}`).digest('base64url');
  if ((op.length + 1 + json.length) * 3 > SCRATCH_BYTES) return oneShot('sha1', `${op}\u0000${json}`, 'base64url');
  const buffer = scratchBuffer();
  let at = buffer.write(op, 0, 'utf8');
  buffer[at++] = 0;
  at += buffer.write(json, at, 'utf8');
  return oneShot('sha1', buffer.subarray(0, at), 'base64url');
}

const scratchBuffer = (): Buffer => (scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES));

/**
 * The content JSON written piece by piece (record-json.ts ContentPieces): the same bytes as the
 * joined text, without building it — joined, a load's ~6 KB JSON was a new string per record.
 */
function hashPieces(op: string, { text, pieces, tail }: ContentPieces): string {
  const buffer = scratchBuffer();
  let at = buffer.write(op, 0, 'utf8');
  buffer[at++] = 0;
  buffer[at++] = OPEN_BRACE;
  for (let i = 0; i < pieces.length; i += 2) {
    if (i > 0) buffer[at++] = COMMA;
    at += buffer.write(text.slice(pieces[i]!, pieces[i + 1]!), at, 'utf8');
  }
  if (tail !== undefined) {
    if (pieces.length > 0) buffer[at++] = COMMA;
    at += buffer.write(tail, at, 'utf8');
  }
  buffer[at++] = CLOSE_BRACE;
  return oneShot!('sha1', buffer.subarray(0, at), 'base64url');
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
