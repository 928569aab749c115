import { createHmac, timingSafeEqual } from 'node:crypto';

/** Prefixes the spec shows for `X-Hub-Signature` (§6.1 writes both `sha1=` and `sha=`). */
const PREFIX = /^(sha1|sha)=/i;
const SHA1_HEX = /^[0-9a-f]{40}$/i;

export type SignatureVerdict = 'valid' | 'missing' | 'malformed' | 'mismatch';

/** The value a sender puts in `X-Hub-Signature`: hex HMAC-SHA1 of the raw body. */
export function expectedSignature(secret: string, rawBody: Buffer): Buffer {
  return createHmac('sha1', secret).update(rawBody).digest();
}

/**
 * Checks `X-Hub-Signature` against the HMAC-SHA1 of the RAW body (never a re-serialised JSON, which
 * would differ in whitespace and key order). Compared in constant time on equal-length buffers, so
 * the answer time does not reveal how many leading bytes matched.
 */
export function verifySignature(secret: string, rawBody: Buffer, header: string | string[] | undefined): SignatureVerdict {
  if (header === undefined || (Array.isArray(header) && header.length === 0)) return 'missing';
  // A repeated header is ambiguous; refuse rather than pick one.
  if (Array.isArray(header)) return header.length === 1 ? verifySignature(secret, rawBody, header[0]) : 'malformed';
  const value = header.trim();
  if (value === '') return 'missing';
  const hex = value.replace(PREFIX, '');
  if (hex === value || !SHA1_HEX.test(hex)) return 'malformed';
  const given = Buffer.from(hex, 'hex');
  const expected = expectedSignature(secret, rawBody);
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'valid' : 'mismatch';
}
