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
  let out = maskUrlSecrets(text);
  if (known.size === 0) return scrubBearer(out);
  for (const secret of known) {
    if (out.includes(secret)) out = out.split(secret).join(MASK);
  }
  return scrubBearer(out);
}

function scrubBearer(out: string): string {
  // Bearer credentials that were never registered (for example a token read from a response
  // that failed to parse) are masked by shape.
  return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${MASK}`);
}

/**
 * `scheme://user:password@host`: the password is everything up to the last `@` of the authority
 * (an unencoded `@` in a password is common), never crossing `/`, `?`, `#` or whitespace.
 */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:)[^\s/?#]*(?=@)/gi;
/**
 * `password=`, `token=`, `secret=`, `api_key=`… as URL query parameters or in `Key=value;`
 * connection strings. The name is checked with the same pattern as config keys.
 */
const SECRET_PARAMETER = /([?&;]|^|\s)([A-Za-z0-9_.-]*(?:secret|password|passwd|pwd|passphrase|token|api_?key|access_?key|credential)[A-Za-z0-9_.-]*=)[^&;\s#"']*/gi;

/**
 * Masks credentials written inside URLs and connection strings, registered or not: a database
 * `url:` in the config, a webhook address with a token parameter, a driver error quoting its URI.
 */
export function maskUrlSecrets(text: string): string {
  if (!text.includes('=') && !text.includes('@')) return text;
  return text.replace(URL_USERINFO, `$1${MASK}`).replace(SECRET_PARAMETER, (match, lead: string, name: string) => (match.length === lead.length + name.length ? match : `${lead}${name}${MASK}`));
}

/** The credentials inside URLs and connection strings of `text` (for registering them as secrets). */
export function urlSecretsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(URL_USERINFO)) {
    const password = match[0].slice(match[1]!.length);
    found.push(password);
    // A percent-encoded password reaches the driver decoded; a log line may show either form.
    try {
      found.push(decodeURIComponent(password));
    } catch {
      // not valid percent-encoding: the raw form is all there is
    }
  }
  for (const match of text.matchAll(SECRET_PARAMETER)) found.push(match[0].slice(match[1]!.length + match[2]!.length));
  return found.filter((secret) => secret !== '');
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
