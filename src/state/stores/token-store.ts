import type { Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { durableCommit } from '../durability.js';

import type { StoredTokens, TokenStore } from '../../contracts/token-store.js';

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
