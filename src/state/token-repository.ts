import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { StateTables } from './tables.js';
import { durableCommit } from './durability.js';

import type { StoredTokens, TokenStore } from '../api/token-store.js';

// One definition of the token store contract lives with the client that uses it.
export type { StoredTokens, TokenStore } from '../api/token-store.js';
export { InMemoryTokenStore } from '../api/token-store.js';

export interface TokenAccountIdentity {
  baseUrl: string;
  variant: string;
  /** Absent with pre-issued tokens (no client credentials). */
  clientId?: string | undefined;
}

/**
 * The `tokens.account` key of an API account. Changing the base URL, the variant or the client
 * id starts from fresh tokens instead of sending one deployment's tokens to another. Hashed so the
 * state file does not list client ids.
 */
export function tokenAccountKey(identity: TokenAccountIdentity): string {
  const baseUrl = identity.baseUrl.replace(/\/+$/, '').toLowerCase();
  const digest = createHash('sha256')
    .update(`${identity.variant}\n${baseUrl}\n${identity.clientId ?? '(pre-issued)'}`)
    .digest('hex');
  return `${identity.variant}:${digest.slice(0, 32)}`;
}

export class SqlTokenStore implements TokenStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async load(account: string): Promise<StoredTokens | undefined> {
    const row = await this.db
      .selectFrom('tokens')
      .select(['access_token', 'refresh_token', 'access_expires_at'])
      .where('account', '=', account)
      .executeTakeFirst();
    if (!row) return undefined;
    return { accessToken: row.access_token, refreshToken: row.refresh_token, accessExpiresAt: row.access_expires_at };
  }

  async save(account: string, tokens: StoredTokens): Promise<void> {
    const values = {
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      access_expires_at: tokens.accessExpiresAt,
      updated_at: this.now().toISOString(),
    };
    // The rotated brokerage refresh token is the only credential left once the old one is
    // invalidated: this commit must survive a power cut before the caller uses the new token.
    await durableCommit(this.db, () =>
      this.db
        .insertInto('tokens')
        .values({ account, ...values })
        .onConflict((oc) => oc.column('account').doUpdateSet(values))
        .execute(),
    );
  }

  async clear(account: string): Promise<void> {
    await this.db.deleteFrom('tokens').where('account', '=', account).execute();
  }
}
