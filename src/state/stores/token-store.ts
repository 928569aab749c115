import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { durableCommit } from '../durability.js';
import { dbNowMsSql, stateDialect } from '../db-clock.js';
import { processAlive } from '../../util/process-alive.js';

import { TOOK_OVER_EXPIRED_LOCK, type ReauthMark, type StoredTokens, type TokenStore } from '../../contracts/token-store.js';

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
   * The account's refresh lock (issue 11, item 4): a row with a deadline by the database clock,
   * taken in one atomic statement when free, expired, or already ours. It is committed, so it
   * outlives anything that happens to the connection that took it: a refresh whose connection the
   * database ended (a restart, `pg_terminate_backend`, a pool that replaced it) while the API call
   * was in flight still keeps everyone else away until its deadline, and on brokerage nobody
   * spends the refresh token that call is rotating. No connection is held during the API call
   * either, so refreshes of many accounts never starve a shared pool.
   *
   * A holder whose process no longer runs **on this host** (holder ids are `<pid>:<unique>:<host>`,
   * see TokenManager) is taken over at once: a daemon restarted after `kill -9` inside a refresh,
   * or a replica beside it, does not wait for the deadline. A holder on another host that died is
   * waited for until the deadline. (On SQLite, one host per file, ids without a host count as ours.)
   *
   * The caller must end its API call before `ttlMs` (TokenManager does).
   */
  async acquireRefreshLock(account: string, holder: string, ttlMs: number): Promise<boolean | typeof TOOK_OVER_EXPIRED_LOCK> {
    const ttl = Math.max(1, Math.trunc(ttlMs));
    const nowMs = dbNowMsSql(this.db);
    const current = await this.db.selectFrom('token_refresh_locks').select('holder').where('account', '=', account).executeTakeFirst();
    const gone = current !== undefined && current.holder !== holder && heldByGoneProcess(current.holder, stateDialect(this.db) === 'sqlite');
    if (gone) {
      // Compare-and-delete: only the dead holder's row, not one a live process took meanwhile.
      await this.db.deleteFrom('token_refresh_locks').where('account', '=', account).where('holder', '=', current.holder).execute();
    }
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
    if (row?.holder !== holder) return false;
    // Released locks are deleted: a row of someone else's that we replaced had expired unreleased.
    return current !== undefined && current.holder !== holder && !gone ? TOOK_OVER_EXPIRED_LOCK : true;
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

/**
 * Whether a refresh lock's holder (`<pid>:<unique>[:<host>]`, TokenManager) is a process that no
 * longer runs here. Only a holder on this host can be checked; one without a host is taken as this
 * host's where a state file cannot be shared across hosts (SQLite), and as unknown elsewhere.
 */
function heldByGoneProcess(holder: string, oneHost: boolean): boolean {
  const [pidText, , host] = holder.split(':');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const here = host === undefined ? oneHost : host === os.hostname();
  return here && !processAlive(pid);
}

