import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { ServerClock } from './clock.js';
import { HttpError } from './http-error.js';

/**
 * Token lifecycle of §5. Access tokens are stateless signed JWTs with `exp` (seconds) checked
 * against the server clock; several may be valid at once. Exactly one refresh token is active at a
 * time: rotating it (`/generate-new-token`) or `revokeAll()` makes the previous one fail at once.
 */

function b64url(input: Buffer | string): string {
  return Buffer.from(input).toString('base64url');
}

export type TokenKind = 'access' | 'refresh';

/** A retired refresh token presented again, and what the server knows about why. */
export interface RetiredRefreshUse {
  /**
   * The pair that replaced it was never presented by anyone: the client that received the
   * rotation's answer lost it (it died before storing it), so no client could have known better.
   */
  lostAnswer: boolean;
  /** The server itself cut that answer short (an injected fault): the client never had the pair. */
  answerCutByFault: boolean;
  /** When the rotation that retired it was answered (local ms), when it was retired otherwise. */
  retiredAtMs: number;
}

export class AuthService {
  private readonly key = randomBytes(32);
  private activeRefresh: string | null = null;
  /** Refresh tokens rotated away or revoked: presenting one again is counted (a client bug). */
  private readonly retiredRefresh = new Set<string>();
  /** Per refresh token rotated away: the pair its rotation answered, and whether it was ever presented. */
  private readonly successors = new Map<string, { rotatedAtMs: number; presented: boolean; cutByFault: boolean }>();
  /** A rotation's new refresh and access token → the refresh token that rotation retired. */
  private readonly retiredBy = new Map<string, string>();

  constructor(
    private readonly clock: ServerClock,
    private readonly credentials: { clientId: string; clientSecret: string },
    private readonly accessTtlMs: () => number,
    private readonly onIssue: () => void,
    private readonly onRetiredRefreshUse: (use: RetiredRefreshUse) => void = () => {},
  ) {}

  private sign(kind: TokenKind, ttlMs: number | null): string {
    const nowSec = Math.floor(this.clock.nowMs() / 1000);
    const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload: Record<string, unknown> = { sub: this.credentials.clientId, typ: kind, iat: nowSec, jti: randomUUID() };
    // Sub-second TTLs still need an exp in the future-or-now second; tests use short TTLs.
    if (ttlMs !== null) payload['exp'] = Math.floor((this.clock.nowMs() + ttlMs) / 1000);
    const body = b64url(JSON.stringify(payload));
    const sig = createHmac('sha256', this.key).update(`${header}.${body}`).digest('base64url');
    this.onIssue();
    return `${header}.${body}.${sig}`;
  }

  /** Decodes and checks signature and expiry; undefined when invalid. */
  private verify(token: string, kind: TokenKind): Record<string, unknown> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [header, body, sig] = parts as [string, string, string];
    const expected = createHmac('sha256', this.key).update(`${header}.${body}`).digest();
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    if (payload['typ'] !== kind) return undefined;
    const exp = payload['exp'];
    if (typeof exp === 'number' && exp * 1000 <= this.clock.nowMs()) return undefined;
    return payload;
  }

  retrieve(clientId: unknown, clientSecret: unknown): { access_token: string; refresh_token: string; tokenType: 'public' } {
    if (typeof clientId !== 'string' || clientId === '') throw new HttpError(400, 'clientId is required');
    if (typeof clientSecret !== 'string' || clientSecret === '') throw new HttpError(400, 'clientSecret is required');
    if (clientId !== this.credentials.clientId || clientSecret !== this.credentials.clientSecret) {
      throw new HttpError(401, 'clientId or clientSecret is wrong');
    }
    // "Always returns a valid access token and refresh token": the active refresh token is kept.
    this.activeRefresh ??= this.sign('refresh', null);
    return { access_token: this.sign('access', this.accessTtlMs()), refresh_token: this.activeRefresh, tokenType: 'public' };
  }

  /** A token a rotation issued reached us from a client: that rotation's answer was not lost. */
  private presented(bearer: string): void {
    const retired = this.retiredBy.get(bearer);
    if (retired === undefined) return;
    this.retiredBy.delete(bearer);
    const successor = this.successors.get(retired);
    if (successor) successor.presented = true;
  }

  private requireRefresh(bearer: string | undefined): void {
    if (bearer) this.presented(bearer);
    if (bearer && this.retiredRefresh.has(bearer)) {
      const successor = this.successors.get(bearer);
      this.onRetiredRefreshUse({
        lostAnswer: successor !== undefined && !successor.presented,
        answerCutByFault: successor?.cutByFault === true,
        retiredAtMs: successor?.rotatedAtMs ?? Date.now(),
      });
    }
    if (!bearer || bearer !== this.activeRefresh || !this.verify(bearer, 'refresh')) {
      throw new HttpError(401, 'refresh token is invalid or has been replaced');
    }
  }

  /** Main `GET /token`: new access token, refresh token stays valid. */
  accessFromRefresh(bearer: string | undefined): { access_token: string; tokenType: 'public' } {
    this.requireRefresh(bearer);
    return { access_token: this.sign('access', this.accessTtlMs()), tokenType: 'public' };
  }

  /** `GET /generate-new-token`: new access token and a new refresh token; the old one dies now. */
  rotate(bearer: string | undefined): { token: string; refresh_token: string; tokenType: 'public' } {
    this.requireRefresh(bearer);
    this.retiredRefresh.add(bearer!);
    this.activeRefresh = this.sign('refresh', null);
    const token = this.sign('access', this.accessTtlMs());
    this.successors.set(bearer!, { rotatedAtMs: Date.now(), presented: false, cutByFault: false });
    this.retiredBy.set(this.activeRefresh, bearer!);
    this.retiredBy.set(token, bearer!);
    return { token, refresh_token: this.activeRefresh, tokenType: 'public' };
  }

  /** The answer that carried `refreshToken` (a rotation's) was cut short by an injected fault. */
  answerCutByFault(refreshToken: string): void {
    const retired = this.retiredBy.get(refreshToken);
    const successor = retired === undefined ? undefined : this.successors.get(retired);
    if (successor) successor.cutByFault = true;
  }

  requireAccess(bearer: string | undefined): void {
    if (!bearer) throw new HttpError(401, 'Authorization bearer access token is required');
    this.presented(bearer);
    if (!this.verify(bearer, 'access')) throw new HttpError(401, 'access token is invalid or expired');
  }

  revokeRefreshTokens(): void {
    if (this.activeRefresh) this.retiredRefresh.add(this.activeRefresh);
    this.activeRefresh = null;
  }
}

export function bearerOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? (match[1] as string).trim() : undefined;
}
