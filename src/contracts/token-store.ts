/**
 * Where API tokens live between runs (the port the API client uses; state stores implement it).
 * The brokerage variant rotates the refresh token on every refresh (spec §5.6) and the old one
 * dies at once, so `save` must be durable when it resolves: the new refresh token is saved before
 * the new access token is used.
 */
export interface StoredTokens {
  accessToken: string | null;
  refreshToken: string | null;
  /** ISO 8601; null when the access token carries no `exp`. */
  accessExpiresAt: string | null;
}

/**
 * An account whose tokens are truly lost (the refresh token rejected after the store was re-read
 * and no client credentials, or the client credentials rejected): every process sharing the
 * store pauses its API work until the user fixes the credentials.
 */
export interface ReauthMark {
  /** What was rejected and what to do (no secrets). */
  reason: string;
  /** ISO 8601, when it was marked. */
  since: string;
  /**
   * Fingerprint of the configured credentials that were rejected: a config with other
   * credentials for the same account clears the mark on its next attempt.
   */
  credentials: string | null;
}

export interface TokenStore {
  load(account: string): Promise<StoredTokens | undefined>;
  save(account: string, tokens: StoredTokens): Promise<void>;
  clear(account: string): Promise<void>;
  /**
   * Optional, for stores several processes share: takes the account's refresh lock for `holder`
   * until `ttlMs` from now, or takes it over when it expired. Resolves false while another holder
   * has it. Without it, refreshes are serialised within the process only. TOOK_OVER_EXPIRED_LOCK
   * (truthy: acquired) when it was taken from a holder whose deadline passed without a release and
   * who is not known to be dead: it may still be inside a refresh, paused or starved.
   */
  acquireRefreshLock?(account: string, holder: string, ttlMs: number): Promise<boolean | typeof TOOK_OVER_EXPIRED_LOCK>;
  /** Releases the lock if `holder` still has it. */
  releaseRefreshLock?(account: string, holder: string): Promise<void>;
  /** Optional: the account's re-authentication mark (see ReauthMark), undefined when none. */
  reauthRequired?(account: string): Promise<ReauthMark | undefined>;
  markReauthRequired?(account: string, mark: ReauthMark): Promise<void>;
  clearReauthRequired?(account: string): Promise<void>;
}

/** acquireRefreshLock's answer when the lock was taken over from a holder that may still be refreshing. */
export const TOOK_OVER_EXPIRED_LOCK = 'took-over-expired' as const;
