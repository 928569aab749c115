import type { ReauthMark, StoredTokens, TokenStore } from '../contracts/token-store.js';

// The port is part of the contracts; state stores implement it, the client uses it.
export type { ReauthMark, StoredTokens, TokenStore } from '../contracts/token-store.js';

/** Tokens kept in memory only (tests, one-shot tools): lost when the process ends. */
export class InMemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, StoredTokens>();
  private readonly marks = new Map<string, ReauthMark>();

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

  async reauthRequired(account: string): Promise<ReauthMark | undefined> {
    const mark = this.marks.get(account);
    return mark ? { ...mark } : undefined;
  }

  async markReauthRequired(account: string, mark: ReauthMark): Promise<void> {
    this.marks.set(account, { ...mark });
  }

  async clearReauthRequired(account: string): Promise<void> {
    this.marks.delete(account);
  }
}
