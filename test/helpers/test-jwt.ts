/**
 * An unsigned JWT-shaped access token expiring `expSecondsFromNow` from now (negative: already
 * expired), unique per call: what the token manager reads its expiry from (src/api/jwt.ts).
 */
export function jwt(expSecondsFromNow: number): string {
  const now = Math.floor(Date.now() / 1000);
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${b64({ alg: 'none' })}.${b64({ exp: now + expSecondsFromNow, iat: now, n: Math.random() })}.sig`;
}
