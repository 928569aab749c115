import { createHash } from 'node:crypto';
import type { AuthCredentials } from './token-manager.js';
import type { ApiVariant } from './variant.js';

/**
 * The key of an account's tokens in the store. Includes a hash of the configured identity, so a
 * user who pastes a new token pair into the config starts from it instead of a stale stored one.
 */
export function accountKey(baseUrl: string, variant: ApiVariant, credentials: AuthCredentials): string {
  const identity = 'clientId' in credentials ? `client:${credentials.clientId}` : `pair:${credentials.refreshToken}`;
  const digest = createHash('sha256').update(identity).digest('hex').slice(0, 16);
  return `${variant}|${baseUrl}|${digest}`;
}
