import type { Logger } from '../util/logger.js';
import { registerSecret } from '../util/secrets.js';
import { ApiAuthError, ApiError } from './errors.js';
import { readJwtTimes } from './jwt.js';
import type { TokenRecord } from './schemas/resources.js';
import type { ServerClock } from './server-clock.js';
import type { StoredTokens, TokenStore } from './token-store.js';
import type { ApiVariant } from './variant.js';

/** Credentials from the config (spec §5): client id + secret, or a pre-issued token pair. */
export type AuthCredentials =
  | { clientId: string; clientSecret: string }
  | { accessToken?: string | undefined; refreshToken: string };

/** The raw token calls (spec §4.1), made without an access token. */
export interface TokenEndpoints {
  retrieveToken(clientId: string, clientSecret: string, signal?: AbortSignal): Promise<TokenRecord>;
  /** Main: `GET /token` — new access token, refresh token stays valid. */
  refreshAccessToken(refreshToken: string, signal?: AbortSignal): Promise<TokenRecord>;
  /** Brokerage: `GET /generate-new-token` — new access AND refresh token; the old refresh token dies. */
  rotateTokens(refreshToken: string, signal?: AbortSignal): Promise<TokenRecord>;
}

export interface TokenManagerOptions {
  variant: ApiVariant;
  credentials: AuthCredentials;
  store: TokenStore;
  /** Key of this account in the store (base URL, variant and identity). */
  account: string;
  endpoints: TokenEndpoints;
  clock: ServerClock;
  refreshBeforeExpiryMs: number;
  logger: Logger;
}

/**
 * The token lifecycle of spec §5. One refresh at a time (single-flight): concurrent callers share
 * the refresh in progress, which matters doubly on brokerage where two parallel refreshes would
 * each rotate the refresh token and one of them would be left holding a dead one.
 */
export class TokenManager {
  private current: StoredTokens | undefined;
  private loading: Promise<void> | undefined;
  private refreshing: Promise<string> | undefined;
  refreshCount = 0;

  constructor(private readonly options: TokenManagerOptions) {}

  /** A usable access token, refreshed first when missing or about to expire. */
  async accessToken(signal?: AbortSignal): Promise<string> {
    await this.ensureLoaded();
    const token = this.current?.accessToken;
    if (token && !this.expiresSoon(this.current!)) return token;
    return this.refresh(signal);
  }

  /**
   * The server answered 401 to `rejectedToken`. Refreshes once — unless another caller already
   * replaced that token, in which case the newer token is returned without a second refresh.
   */
  async onUnauthorized(rejectedToken: string, signal?: AbortSignal): Promise<string> {
    await this.ensureLoaded();
    if (this.refreshing) return this.refreshing;
    const token = this.current?.accessToken;
    if (token && token !== rejectedToken) return token;
    if (this.current) this.current = { ...this.current, accessToken: null, accessExpiresAt: null };
    return this.refresh(signal);
  }

  /** Current state, for `status` and tests (never logged). */
  snapshot(): StoredTokens | undefined {
    return this.current ? { ...this.current } : undefined;
  }

  private ensureLoaded(): Promise<void> {
    // Memoized so concurrent first callers share one load (and one seeding of the store).
    this.loading ??= this.load();
    return this.loading;
  }

  private async load(): Promise<void> {
    const stored = await this.options.store.load(this.options.account);
    const credentials = this.options.credentials;
    if (stored && (stored.accessToken || stored.refreshToken)) {
      // The store wins over the config: on brokerage the configured refresh token has been
      // rotated away after the first refresh, and only the stored one is alive.
      this.current = stored;
    } else if ('refreshToken' in credentials) {
      this.current = {
        accessToken: credentials.accessToken ?? null,
        refreshToken: credentials.refreshToken,
        accessExpiresAt: expiryOf(credentials.accessToken ?? null),
      };
      await this.options.store.save(this.options.account, this.current);
    }
    registerSecret(this.current?.accessToken);
    registerSecret(this.current?.refreshToken);
  }

  private expiresSoon(tokens: StoredTokens): boolean {
    if (!tokens.accessExpiresAt || !tokens.accessToken) return false;
    const expiresAt = Date.parse(tokens.accessExpiresAt);
    if (Number.isNaN(expiresAt)) return false;
    // A short-lived token (seconds) must not be refreshed on every call: the margin is capped at
    // a quarter of its lifetime.
    const times = readJwtTimes(tokens.accessToken);
    const lifetime = times?.issuedAtMs !== undefined ? expiresAt - times.issuedAtMs : undefined;
    const margin = lifetime !== undefined ? Math.min(this.options.refreshBeforeExpiryMs, lifetime / 4) : this.options.refreshBeforeExpiryMs;
    return this.options.clock.now().getTime() >= expiresAt - margin;
  }

  private refresh(signal?: AbortSignal): Promise<string> {
    if (!this.refreshing) {
      this.refreshing = this.doRefresh(signal).finally(() => {
        this.refreshing = undefined;
      });
    }
    return this.refreshing;
  }

  private async doRefresh(signal?: AbortSignal): Promise<string> {
    const { variant, credentials, endpoints, logger } = this.options;
    const refreshToken = this.current?.refreshToken ?? null;
    const hasClientCredentials = 'clientId' in credentials;
    this.refreshCount += 1;

    if (refreshToken) {
      try {
        if (variant === 'main') {
          const record = await endpoints.refreshAccessToken(refreshToken, signal);
          const accessToken = pickAccessToken(record, 'GET /token');
          return await this.adopt({ accessToken, refreshToken: record.refresh_token ?? refreshToken });
        }
        const record = await endpoints.rotateTokens(refreshToken, signal);
        const accessToken = pickAccessToken(record, 'GET /generate-new-token');
        if (!record.refresh_token) {
          logger.warn('GET /generate-new-token returned no refresh_token; keeping the previous one');
        }
        return await this.adopt({ accessToken, refreshToken: record.refresh_token ?? refreshToken });
      } catch (error) {
        const rejected = error instanceof ApiError && (error.status === 401 || error.status === 403);
        if (!rejected) throw error;
        if (!hasClientCredentials) {
          throw new ApiAuthError(
            `the refresh token was rejected (HTTP ${error.status}) and no clientId/clientSecret is configured: ` +
              'generate a new token pair in the developer settings and set api.auth, or configure client credentials',
            { cause: error },
          );
        }
        logger.warn({ status: error.status }, 'refresh token rejected; retrieving new tokens with client credentials');
      }
    }

    if (hasClientCredentials) {
      let record: TokenRecord;
      try {
        record = await endpoints.retrieveToken(credentials.clientId, credentials.clientSecret, signal);
      } catch (error) {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403 || error.status === 400)) {
          throw new ApiAuthError(
            `POST /retrieve-token rejected the configured clientId/clientSecret (HTTP ${error.status}: ${error.serverMessage})`,
            { cause: error },
          );
        }
        throw error;
      }
      const accessToken = pickAccessToken(record, 'POST /retrieve-token');
      return this.adopt({ accessToken, refreshToken: record.refresh_token ?? null });
    }
    throw new ApiAuthError('no access token and no way to get one: configure api.auth (clientId/clientSecret or a token pair)');
  }

  /** Persists the new tokens — before anyone uses them — and makes them current. */
  private async adopt(tokens: { accessToken: string; refreshToken: string | null }): Promise<string> {
    registerSecret(tokens.accessToken);
    registerSecret(tokens.refreshToken);
    const next: StoredTokens = {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      accessExpiresAt: expiryOf(tokens.accessToken),
    };
    await this.options.store.save(this.options.account, next);
    this.current = next;
    this.options.logger.debug({ expiresAt: next.accessExpiresAt }, 'access token refreshed');
    return tokens.accessToken;
  }
}

function pickAccessToken(record: TokenRecord, route: string): string {
  const token = record.access_token ?? record.token;
  if (!token) throw new ApiAuthError(`${route} answered without an access token`);
  return token;
}

function expiryOf(accessToken: string | null): string | null {
  if (!accessToken) return null;
  const times = readJwtTimes(accessToken);
  return times ? new Date(times.expiresAtMs).toISOString() : null;
}
