/**
 * Reads `exp` (and `iat`) from a JWT-shaped access token without verifying it: the daemon only
 * needs to know when to refresh. Returns undefined for opaque tokens.
 */
export interface JwtTimes {
  expiresAtMs: number;
  issuedAtMs: number | undefined;
}

export function readJwtTimes(token: string): JwtTimes | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof payload.exp !== 'number' || !Number.isFinite(payload.exp)) return undefined;
    return {
      expiresAtMs: payload.exp * 1000,
      issuedAtMs: typeof payload.iat === 'number' ? payload.iat * 1000 : undefined,
    };
  } catch {
    return undefined;
  }
}
