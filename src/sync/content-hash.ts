import { createHash } from 'node:crypto';

/**
 * A stable hash of a record's content: key order does not matter, so the same record serialized
 * differently by the server hashes the same. Records re-read through overlapping windows
 * (lookback) are delivered again only when this hash changed.
 */
export function contentHash(op: string, data: unknown): string {
  const hash = createHash('sha1');
  hash.update(op);
  hash.update('\u0000');
  writeStable(hash, data);
  return hash.digest('base64url');
}

function writeStable(hash: ReturnType<typeof createHash>, value: unknown): void {
  if (value === null || typeof value !== 'object') {
    hash.update(JSON.stringify(value) ?? 'undefined');
    return;
  }
  if (Array.isArray(value)) {
    hash.update('[');
    for (const item of value) {
      writeStable(hash, item);
      hash.update(',');
    }
    hash.update(']');
    return;
  }
  const record = value as Record<string, unknown>;
  hash.update('{');
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue;
    hash.update(JSON.stringify(key));
    hash.update(':');
    writeStable(hash, record[key]);
    hash.update(',');
  }
  hash.update('}');
}
