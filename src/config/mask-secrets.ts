import { isSecretKey, maskUrlSecrets, registerSecret, SECRET_MASK, urlSecretsOf } from '../util/secrets.js';

/**
 * A deep copy of `value` in which everything under a secret-looking key (clientSecret,
 * refreshToken, password, …) is replaced by the mask, and credentials inside URLs or connection
 * strings under any key (`url: postgres://user:pass@host`) are masked: safe to print
 * (`validate-config`) or log.
 */
export function maskSecrets<T>(value: T): T {
  return mask(value, false) as T;
}

function mask(value: unknown, underSecretKey: boolean): unknown {
  if (underSecretKey && value !== null && value !== undefined) return SECRET_MASK;
  if (Array.isArray(value)) return value.map((item) => mask(item, false));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) out[key] = mask(child, isSecretKey(key));
    return out;
  }
  return typeof value === 'string' ? maskUrlSecrets(value) : value;
}

/**
 * Registers every string found under a secret-looking key, at any depth (also inside connector
 * options the schema does not know yet), so the log scrubber masks them wherever they appear.
 */
export function registerConfigSecrets(value: unknown, underSecretKey = false): void {
  if (typeof value === 'string') {
    if (underSecretKey) registerSecret(value);
    // A password inside a URL is registered too, so a message quoting it without the URL around it is masked.
    else for (const secret of urlSecretsOf(value)) registerSecret(secret);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) registerConfigSecrets(item, underSecretKey);
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      registerConfigSecrets(child, underSecretKey || isSecretKey(key));
    }
  }
}
