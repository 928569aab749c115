/**
 * Where tokens live between runs. The brokerage variant rotates the refresh token on every
 * refresh (spec §5.6) and the old one dies at once, so `save` must be durable when it resolves:
 * the new refresh token is saved before the new access token is used.
 */
export interface StoredTokens {
  accessToken: string | null;
  refreshToken: string | null;
  /** ISO 8601; null when the access token carries no `exp`. */
  accessExpiresAt: string | null;
}

export interface TokenStore {
  load(account: string): Promise<StoredTokens | undefined>;
  save(account: string, tokens: StoredTokens): Promise<void>;
  clear(account: string): Promise<void>;
}

export class InMemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, StoredTokens>();

  async load(account: string): Promise<StoredTokens | undefined> {
    const found = this.tokens.get(account);
    return found ? { ...found } : undefined;
  }

  async save(account: string, tokens: StoredTokens): Promise<void> {
    this.tokens.set(account, { ...tokens });
  }

  async clear(account: string): Promise<void> {
    this.tokens.delete(account);
  }
}
