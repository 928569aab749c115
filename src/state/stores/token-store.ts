import { sql, type ControlledTransaction, type Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { durableCommit } from '../durability.js';
import { dbNowMsSql, stateDialect } from '../db-clock.js';
import { processAlive } from '../../util/process-alive.js';

import type { ReauthMark, StoredTokens, TokenStore } from '../../contracts/token-store.js';

export class SqlTokenStore implements TokenStore {
  /** PostgreSQL: the open transaction holding each refresh lock this process has (account + holder). */
  private readonly held = new Map<string, ControlledTransaction<StateTables>>();

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
   * The account's refresh lock (issue 11, item 4). How it frees when its holder dies decides how
   * long everyone else waits for tokens, so each dialect uses what it can trust:
   *
   * - **PostgreSQL** (replicas on several hosts): the account's row of `token_refresh_locks` is
   *   locked `FOR UPDATE` by a transaction held open for the refresh (nothing is written in it;
   *   the release rolls it back). A killed holder's connection closes and the lock goes with it at
   *   once; a holder whose host vanished (no reset ever arrives) sits idle in that transaction,
   *   which the server ends after `ttlMs` (`idle_in_transaction_session_timeout`, set for it). A
   *   live deadline in the row is a process of an older version refreshing: respected.
   * - **SQLite** (one host: the file cannot be shared across hosts): the row with a deadline by
   *   the database clock; a holder whose process no longer exists on this host (holder ids start
   *   with the pid, see TokenManager) is taken over at once, so a daemon restarted after `kill -9`
   *   inside a refresh, or a `sync` beside it, does not wait for the deadline.
   *
   * In both, the caller must end its API call before `ttlMs` (TokenManager does).
   */
  async acquireRefreshLock(account: string, holder: string, ttlMs: number): Promise<boolean> {
    const ttl = Math.max(1, Math.trunc(ttlMs));
    if (stateDialect(this.db) === 'postgres') return this.lockRowForRefresh(account, holder, ttl);
    const nowMs = dbNowMsSql(this.db);
    const current = await this.db.selectFrom('token_refresh_locks').select('holder').where('account', '=', account).executeTakeFirst();
    const deadPid = current && current.holder !== holder ? pidOf(current.holder) : undefined;
    if (deadPid !== undefined && !processAlive(deadPid)) {
      // Compare-and-delete: only the dead holder's row, not one a live process took meanwhile.
      await this.db.deleteFrom('token_refresh_locks').where('account', '=', account).where('holder', '=', current!.holder).execute();
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
    return row?.holder === holder;
  }

  async releaseRefreshLock(account: string, holder: string): Promise<void> {
    const key = lockKey(account, holder);
    const trx = this.held.get(key);
    if (trx) {
      this.held.delete(key);
      // Nothing was written in it (the tokens are saved apart). A session the server ended (idle
      // past the TTL) took the lock with it already, which is all a release wants.
      await trx.rollback().execute().catch(() => undefined);
      return;
    }
    await this.db.deleteFrom('token_refresh_locks').where('account', '=', account).where('holder', '=', holder).execute();
  }

  /** PostgreSQL: see acquireRefreshLock. Never waits: a lock held elsewhere answers false at once. */
  private async lockRowForRefresh(account: string, holder: string, ttl: number): Promise<boolean> {
    const key = lockKey(account, holder);
    const mine = this.held.get(key);
    if (mine) {
      // Ours still, unless the server ended that session (idle past the TTL): then taken anew.
      const alive = await sql`select 1`.execute(mine).then(
        () => true,
        () => false,
      );
      if (alive) return true;
      this.held.delete(key);
      await mine.rollback().execute().catch(() => undefined);
    }
    // The row exists before anyone locks it, created in a tiny transaction of its own (only when
    // missing: an insert that meets a row an open transaction locked may wait for it).
    const exists = await this.db.selectFrom('token_refresh_locks').select('account').where('account', '=', account).executeTakeFirst();
    if (!exists) {
      await this.db.insertInto('token_refresh_locks').values({ account, holder, expires_at_ms: 0 }).onConflict((oc) => oc.column('account').doNothing()).execute();
    }
    const trx = await this.db.startTransaction().execute();
    try {
      // Bounds the lock of a holder that vanished without closing its connection (host lost).
      await sql`select set_config('idle_in_transaction_session_timeout', ${String(ttl)}, true)`.execute(trx);
      const row = await sql<{ holder: string; live: boolean }>`
        select holder, expires_at_ms > ${dbNowMsSql(this.db)} as live from token_refresh_locks where account = ${account} for update nowait`.execute(trx);
      const current = row.rows[0];
      if (!current || (current.live && current.holder !== holder)) {
        await trx.rollback().execute();
        return false;
      }
      this.held.set(key, trx);
      return true;
    } catch (error) {
      await trx.rollback().execute().catch(() => undefined);
      if (isLockNotAvailable(error)) return false;
      throw error;
    }
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

const lockKey = (account: string, holder: string) => `${account}\u0000${holder}`;

/** The pid a holder id starts with (`<pid>:<unique>`, TokenManager), when it has one. */
function pidOf(holder: string): number | undefined {
  const pid = Number(holder.split(':')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** PostgreSQL 55P03: `FOR UPDATE NOWAIT` found the row locked. */
function isLockNotAvailable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '55P03';
}
