import { isSecretKey, maskUrlSecrets, registerSecret, SECRET_MASK, urlSecretsOf } from '../util/secrets.js';

/**
 * A deep copy of `value` in which everything under a secret-looking key (clientSecret,
 * refreshToken, password, …) is replaced by the mask, and credentials inside URLs or connection
 * strings under any key (`url: postgres://user:pass@host`) are masked: safe to print
 * (`validate-config`) or log.
 */
export function maskSecrets<T>(value: T): T {
  return mask(value, false, '') as T;
}

/**
 * Values secret as a whole although their key does not say so: an incoming-webhook address
 * (Slack's `https://hooks.slack.com/services/T…/B…/<token>`) is its own credential, in the path;
 * a notification webhook's extra headers exist to carry credentials (`X-Api-Key`, …).
 */
const WHOLLY_SECRET_PATHS = [/^notifications\.channels\.\d+\.url$/, /^notifications\.channels\.\d+\.headers\.[^.]+$/];

function isSecretPath(path: string, key: string): boolean {
  return isSecretKey(key) || WHOLLY_SECRET_PATHS.some((pattern) => pattern.test(path));
}

/** A secret URL keeps its origin (where it points is useful and not secret) and loses the rest. */
function maskWholeUrl(value: string): string {
  try {
    return `${new URL(value).origin}/${SECRET_MASK}`;
  } catch {
    return SECRET_MASK;
  }
}

function mask(value: unknown, underSecretKey: boolean, path: string): unknown {
  if (underSecretKey && typeof value === 'string' && WHOLLY_SECRET_PATHS.some((pattern) => pattern.test(path))) return maskWholeUrl(value);
  if (underSecretKey && value !== null && value !== undefined) return SECRET_MASK;
  if (Array.isArray(value)) return value.map((item, index) => mask(item, false, `${path}.${index}`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      out[key] = mask(child, isSecretPath(childPath, key), childPath);
    }
    return out;
  }
  return typeof value === 'string' ? maskUrlSecrets(value) : value;
}

/**
 * Registers every string found under a secret-looking key, at any depth (also inside connector
 * options the schema does not know yet), so the log scrubber masks them wherever they appear.
 */
export function registerConfigSecrets(value: unknown, underSecretKey = false, path = ''): void {
  if (typeof value === 'string') {
    if (underSecretKey) registerSecret(value);
    // A password inside a URL is registered too, so a message quoting it without the URL around it is masked.
    else for (const secret of urlSecretsOf(value)) registerSecret(secret);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => registerConfigSecrets(item, underSecretKey, `${path}.${index}`));
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      registerConfigSecrets(child, underSecretKey || isSecretPath(childPath, key), childPath);
    }
  }
}
