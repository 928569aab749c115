/**
 * Every secret value the process learns (client secret, access and refresh tokens, passwords,
 * webhook secrets, private keys) is registered here. The log destination and error formatting
 * replace any registered value with a mask, so a secret that slips into a message, a URL or a
 * serialized object still never reaches a log line. Field-name redaction in the logger is the
 * first line of defence; this is the second.
 */
const MASK = '[REDACTED]';
const MIN_SECRET_LENGTH = 6;

const known = new Set<string>();

export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed.length < MIN_SECRET_LENGTH) return;
  known.add(trimmed);
}

export function forgetSecretsForTests(): void {
  known.clear();
}

export function scrubSecrets(text: string): string {
  if (known.size === 0) return text;
  let out = text;
  for (const secret of known) {
    if (out.includes(secret)) out = out.split(secret).join(MASK);
  }
  // Bearer credentials that were never registered (for example a token read from a response
  // that failed to parse) are masked by shape.
  return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${MASK}`);
}

/** Key names whose values are always secret, wherever they appear in config or logs. */
export const SECRET_KEY_PATTERN =
  /(secret|password|passphrase|token|authorization|private_?key|privatekey|api_?key|credential)/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY_PATTERN.test(key);
}

export const SECRET_MASK = MASK;

/** True when `text` holds a registered secret verbatim (the test guard uses it; never returns which). */
export function containsRegisteredSecret(text: string): boolean {
  for (const secret of known) if (text.includes(secret)) return true;
  return false;
}
