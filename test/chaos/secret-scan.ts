import fs from 'node:fs';
import Database from 'better-sqlite3';

/** A JWT as the API issues them (header.payload.signature, base64url). */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g;

export interface SecretHit {
  label: string;
  count: number;
}

/** The tokens the daemon holds right now (read from its state database, read-only). */
export function tokensInState(stateFile: string): string[] {
  if (!fs.existsSync(stateFile)) return [];
  try {
    const db = new Database(stateFile, { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('select access_token, refresh_token from tokens').all() as Array<{ access_token: string | null; refresh_token: string | null }>;
      return rows.flatMap((r) => [r.access_token, r.refresh_token]).filter((t): t is string => typeof t === 'string' && t.length > 0);
    } finally {
      db.close();
    }
  } catch {
    // A database caught mid-migration by a kill: the next snapshot reads it.
    return [];
  }
}

/**
 * Every configured secret and every token seen, searched in everything the processes printed.
 * A token counts by its signature part too (a log that cut the token short still leaks it).
 */
export function scanForSecrets(logFile: string, secrets: ReadonlyMap<string, string>, tokens: ReadonlySet<string>): SecretHit[] {
  const text = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
  const hits: SecretHit[] = [];
  const count = (needle: string) => (needle.length < 6 ? 0 : text.split(needle).length - 1);
  for (const [label, value] of secrets) {
    const n = count(value);
    if (n > 0) hits.push({ label, count: n });
  }
  let tokenHits = 0;
  for (const token of tokens) {
    const signature = token.split('.')[2] ?? '';
    tokenHits += Math.max(count(token), count(signature));
  }
  if (tokenHits > 0) hits.push({ label: 'access/refresh token', count: tokenHits });
  const jwts = text.match(JWT)?.length ?? 0;
  if (jwts > 0) hits.push({ label: 'anything shaped like a JWT', count: jwts });
  return hits;
}
