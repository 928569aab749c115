import crypto from 'node:crypto';
import { recordJson } from '../util/record-json.js';

/**
 * The hash of a record's content. Records re-read through overlapping windows (lookback) are
 * delivered again only when this hash changed.
 *
 * It hashes the record as the server serialized it (key order included), with the native
 * JSON.stringify: a canonical form with sorted keys cost ~100 µs per load and was the largest
 * CPU cost of a backfill. The server writes a given version of a document the same way every
 * time, so equal content hashes equal; if it ever reordered keys, the price is one harmless
 * re-delivery of an unchanged record to idempotent sinks — never a lost change.
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
  // A record's text is kept for the mapper's `_raw` (serialised once per record, see recordJson).
  const json = (data !== null && typeof data === 'object' && !Array.isArray(data) ? recordJson(data) : JSON.stringify(data)) ?? 'null';
  // crypto.hash (Node ≥ 20.12) skips the Hash object; older Node falls back.
  if (!oneShot) return crypto.createHash('sha1').update(`${op}\u0000${json}`).digest('base64url');
  if ((op.length + 1 + json.length) * 3 > SCRATCH_BYTES) return oneShot('sha1', `${op}\u0000${json}`, 'base64url');
  scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  let at = scratch.write(op, 0, 'utf8');
  scratch[at++] = 0;
  at += scratch.write(json, at, 'utf8');
  return oneShot('sha1', scratch.subarray(0, at), 'base64url');
}
