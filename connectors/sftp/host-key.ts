import { createHash, timingSafeEqual } from 'node:crypto';

/** OpenSSH's fingerprint of a public key blob: `SHA256:` + unpadded base64 of its SHA-256. */
export function sha256Fingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** Constant-time comparison of two fingerprints (trailing `=` padding ignored). */
export function fingerprintsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a.replace(/=+$/, ''), 'utf8');
  const right = Buffer.from(b.replace(/=+$/, ''), 'utf8');
  // Lengths of well-formed fingerprints are public and fixed; only the content is compared in constant time.
  return left.length === right.length && timingSafeEqual(left, right);
}
