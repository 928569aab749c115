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
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;

export function contentHash(op: string, data: unknown): string {
  // A record's text is kept for the mapper's `_raw` (serialised once per record, see recordJson).
  const json = data !== null && typeof data === 'object' && !Array.isArray(data) ? recordJson(data) : JSON.stringify(data);
  const text = `${op}\u0000${json ?? 'null'}`;
  // crypto.hash (Node ≥ 20.12) skips the Hash object; older Node falls back.
  return oneShot ? oneShot('sha1', text, 'base64url') : crypto.createHash('sha1').update(text).digest('base64url');
}
