import { sql, type Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { durableCommit } from '../durability.js';
import { dbNowMsSql } from '../db-clock.js';

import type { ReauthMark, StoredTokens, TokenStore } from '../../contracts/token-store.js';

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

  /**
   * The lock's deadline is taken from the database clock, not this process's: processes on hosts
   * whose clocks differ by more than the TTL would otherwise take each other's live lock over (or
   * wait far too long for a dead one). The TTL itself is a duration, which clock offsets do not
   * change.
   */
  async acquireRefreshLock(account: string, holder: string, ttlMs: number): Promise<boolean> {
    const ttl = Math.max(0, Math.trunc(ttlMs));
    const nowMs = dbNowMsSql(this.db);
    // One statement, atomic in every dialect: insert the lock, or take it over only when it expired
    // (or is already ours, e.g. a retry after a lost answer). Both clocks are read in the database.
    await this.db
      .insertInto('token_refresh_locks')
      .values({ account, holder, expires_at_ms: sql<number>`${nowMs} + ${ttl}` })
      .onConflict((oc) =>
        oc
          .column('account')
          .doUpdateSet({ holder, expires_at_ms: sql<number>`${nowMs} + ${ttl}` })
          .where((eb) => eb.or([eb('token_refresh_locks.expires_at_ms', '<', nowMs), eb('token_refresh_locks.holder', '=', holder)])),
      )
      .execute();
    const row = await this.db.selectFrom('token_refresh_locks').select('holder').where('account', '=', account).executeTakeFirst();
    return row?.holder === holder;
  }

  async releaseRefreshLock(account: string, holder: string): Promise<void> {
    await this.db.deleteFrom('token_refresh_locks').where('account', '=', account).where('holder', '=', holder).execute();
  }

  async reauthRequired(account: string): Promise<ReauthMark | undefined> {
    const row = await this.db.selectFrom('token_reauth').select(['reason', 'since', 'credentials']).where('account', '=', account).executeTakeFirst();
    return row ? { reason: row.reason, since: row.since, credentials: row.credentials } : undefined;
  }

  async markReauthRequired(account: string, mark: ReauthMark): Promise<void> {
    const values = { reason: mark.reason, since: mark.since, credentials: mark.credentials };
    await this.db
      .insertInto('token_reauth')
      .values({ account, ...values })
      .onConflict((oc) => oc.column('account').doUpdateSet(values))
      .execute();
  }

  async clearReauthRequired(account: string): Promise<void> {
    await this.db.deleteFrom('token_reauth').where('account', '=', account).execute();
  }
}
