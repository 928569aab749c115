import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Cross-site request forgery defence of the console's actions (POST only), two checks that must
 * both pass: the form carries a token derived from this process's secret and the request's
 * credentials (another user, or a page that never saw the form, cannot produce it), and a browser
 * that says where the request comes from (Origin, Sec-Fetch-Site) says it is this site.
 */
export class CsrfGuard {
  private readonly key: Buffer;

  /** `publicOrigin`: the console's origin behind a proxy (`http.console.publicUrl`), also accepted. */
  constructor(private readonly publicOrigin: string | undefined, key: Buffer = randomBytes(32)) {
    this.key = key;
  }

  /** The token of the session the request belongs to (its Authorization header). */
  tokenFor(req: IncomingMessage): string {
    return createHmac('sha256', this.key).update(`console-csrf:${req.headers.authorization ?? ''}`).digest('base64url');
  }

  /** Why the request must be refused, or null when it passes. */
  refusal(req: IncomingMessage, token: string | undefined): string | null {
    const site = header(req, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') return `cross-site request refused (Sec-Fetch-Site: ${site})`;
    const origin = header(req, 'origin');
    if (origin !== undefined && !this.sameOrigin(req, origin)) return `request from another origin refused (Origin: ${origin})`;
    if (!token) return 'the form token is missing: reload the page and try again';
    const expected = Buffer.from(this.tokenFor(req));
    const given = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'the form token is not valid (the daemon restarted?): reload the page and try again';
    return null;
  }

  private sameOrigin(req: IncomingMessage, origin: string): boolean {
    if (this.publicOrigin !== undefined && origin === this.publicOrigin) return true;
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      return false;
    }
    // The scheme is not compared: a TLS-terminating proxy in front keeps the Host but the browser says https.
    return host !== '' && host === (req.headers.host ?? '');
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
