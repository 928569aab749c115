import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ConsoleAuth } from '../../config/types.js';

const REALM = 'freight-sync console';

/** Equal-length digests compared in constant time: neither the content nor the length leaks. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function basicCredentials(header: string): { username: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Whether the request carries the configured credentials. With a bearer token, a browser may give
 * the token as the password of its basic login prompt (any user name): browsers cannot add an
 * Authorization: Bearer header to a page load.
 */
export function isAuthorized(req: IncomingMessage, auth: ConsoleAuth): boolean {
  const header = req.headers.authorization ?? '';
  if ('bearerToken' in auth) {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (bearer) return sameSecret(bearer[1]!, auth.bearerToken);
    const basic = basicCredentials(header);
    return basic !== undefined && sameSecret(basic.password, auth.bearerToken);
  }
  const basic = basicCredentials(header);
  if (!basic) return false;
  // Both compared every time, so a right user name with a wrong password takes as long as neither.
  const userOk = sameSecret(basic.username, auth.basic.username);
  const passwordOk = sameSecret(basic.password, auth.basic.password);
  return userOk && passwordOk;
}

/** The WWW-Authenticate challenges of a 401 (basic always, so a browser shows its login prompt). */
export function challenges(auth: ConsoleAuth): string[] {
  const basic = `Basic realm="${REALM}", charset="UTF-8"`;
  return 'bearerToken' in auth ? [`Bearer realm="${REALM}"`, basic] : [basic];
}
