import { sql, type Kysely } from 'kysely';
import { dbNowMsSql, stateDialect } from '../db-clock.js';
import type { StateTables } from '../tables.js';
import type { Fence } from './fence.js';
import { leaseTableName } from './lease-table.js';

/** A lease held: its fence, and until when (database clock, epoch ms). */
export interface Lease extends Fence {
  readonly expiresAtMs: number;
  /** Set by `renew`: another process asks for the lease (a one-shot command waiting for its turn). */
  readonly handOverRequest?: HandOverRequest | undefined;
}

/** A one-shot command waiting for an account's lease (migration 0015). */
export interface HandOverRequest {
  /** The requester's holder id (`host:pid:random`). */
  readonly by: string;
  /** Its command (`sync`, `backfill`). */
  readonly command: string | null;
  readonly expiresAtMs: number;
}

export interface LeaseRow {
  account: string;
  holder: string | null;
  epoch: number;
  expiresAtMs: number;
  /** What the holder is (`run`, `sync`, `backfill`); null when unknown or released. */
  holderCommand: string | null;
  /** A hand-over request still alive by the database clock; undefined when none. */
  request?: HandOverRequest | undefined;
}

export interface ClaimOptions {
  /** The claiming replica's id. */
  holder: string;
  ttlMs: number;
  /** At most this many leases (fair share minus what the replica holds already); default all. */
  max?: number;
  /** What the claimer is (`run`, `sync`, `backfill`), shown by `status` and in the logs of a waiting command. */
  command?: string;
}

/** What `request` found: whether our request stands now, and the row as it is. */
export interface RequestOutcome {
  /** False while another process's request is alive (it came first; ours waits behind it). */
  recorded: boolean;
  row: LeaseRow;
}

/**
 * The `account_leases` table (migration 0013): claim, renew and release account leases. Every
 * comparison with time uses the database clock (src/state/db-clock.ts), never this process's.
 * These writes are never fenced: they are what fencing is checked against.
 */
export class LeaseStore {
  private readonly db: Kysely<StateTables>;
  /** The table in raw SQL (schema-qualified when the leases live in a shared schema). */
  private readonly table: ReturnType<typeof sql.table>;
  private readonly schema: string | undefined;

  /**
   * `schema`: the PostgreSQL schema holding the lease rows when it is not the connection's own —
   * a deployment of several accounts keeps each account's state in a schema of its own and every
   * account's lease in the shared one, so one replica's leases can be counted and claimed together.
   */
  constructor(db: Kysely<StateTables>, options: { schema?: string | undefined } = {}) {
    this.schema = options.schema;
    this.db = options.schema ? db.withSchema(options.schema) : db;
    this.table = sql.table(leaseTableName(options.schema));
  }

  /**
   * Claims up to `max` of `accounts` that are free (never held, released, or expired) or already
   * ours. One transaction: rows missing for an account are inserted first (sorted, so two
   * claimers inserting the same new accounts never deadlock), then the claimable rows are locked
   * and updated.
   *
   * PostgreSQL locks them with `FOR UPDATE SKIP LOCKED`: two replicas claiming at once take
   * disjoint rows instead of waiting on each other, and a row whose holder is committing a fenced
   * transaction (it holds `FOR KEY SHARE`, fence.ts) is skipped — it is not free. Only a claim
   * locks `FOR UPDATE`: renewals, releases and requests are plain UPDATEs of non-key columns, which
   * never wait for a fenced commit.
   * SQLite has no row locks but one writer: the INSERT is a write, so it takes the database write
   * lock first (as BEGIN IMMEDIATE would), and the select and update run alone.
   *
   * Epoch: a claim that changes hands or follows an expiry (ours included) adds one, so work of
   * the earlier tenure can never commit again. Re-claiming a lease we hold and that has not
   * expired is a renewal and keeps the epoch: our running work stays valid.
   *
   * Hand-over requests (`request`): while another process's request lives, a free lease is left
   * to it — only the requester claims it, and its claim clears the request. A renewal (the holder
   * re-claiming its own unexpired lease) is not blocked: the holder is asked to hand over, not cut.
   */
  async claim(accounts: readonly string[], options: ClaimOptions): Promise<Lease[]> {
    const max = options.max ?? accounts.length;
    const unique = [...new Set(accounts)].sort();
    if (unique.length === 0 || max <= 0) return [];
    const { holder } = options;
    const ttl = Math.max(1, Math.trunc(options.ttlMs));
    return this.db.transaction().execute(async (trx) => {
      const now = dbNowMsSql(trx);
      await trx
        .insertInto('account_leases')
        .values(unique.map((account) => ({ account, holder: null, epoch: 0, expires_at_ms: 0 })))
        .onConflict((oc) => oc.column('account').doNothing())
        .execute();
      const lock = stateDialect(trx) === 'postgres' ? sql` for update skip locked` : sql``;
      // Ours first (renewals), then by name: a stable order keeps claims reproducible.
      const { rows } = await sql<{ account: string }>`select account from ${this.table}
        where account in (${sql.join(unique)})
          and (holder is null or holder = ${holder} or expires_at_ms <= ${now})
          and ${notRequestedByOthers(holder, now)}
        order by case when holder = ${holder} then 0 else 1 end, account
        limit ${max}${lock}`.execute(trx);
      if (rows.length === 0) return [];
      const claimed = await trx
        .updateTable('account_leases')
        .set({
          // SET reads the old row: a valid lease of ours keeps its epoch, anything else bumps.
          epoch: sql<number>`case when holder = ${holder} and expires_at_ms > ${now} then epoch else epoch + 1 end`,
          holder,
          holder_command: options.command ?? null,
          expires_at_ms: sql<number>`${now} + ${ttl}`,
          // Our own request is served by this claim.
          requested_by: sql<string | null>`case when requested_by = ${holder} then null else requested_by end`,
          requested_command: sql<string | null>`case when requested_by = ${holder} then null else requested_command end`,
          request_expires_at_ms: sql<number>`case when requested_by = ${holder} then 0 else request_expires_at_ms end`,
        })
        .where('account', 'in', rows.map((r) => r.account))
        // Redundant under the row locks; kept so the UPDATE alone never takes a lease that is not free.
        .where(sql<boolean>`(holder is null or holder = ${holder} or expires_at_ms <= ${now})`)
        .where(notRequestedByOthers(holder, now))
        .returning(['account', 'holder', 'epoch', 'expires_at_ms'])
        .execute();
      const leaseSchema = this.schema === undefined ? {} : { leaseSchema: this.schema };
      return claimed.map((row) => ({ account: row.account, holder, epoch: Number(row.epoch), expiresAtMs: Number(row.expires_at_ms), ...leaseSchema })).sort((a, b) => a.account.localeCompare(b.account));
    });
  }

  /**
   * Extends the leases still ours under the same epoch and not yet expired; returns those
   * renewed. A lease missing from the result is lost: the caller must stop its work, and it is
   * never silently taken back here (that would be a claim, with a new epoch). A renewed lease
   * carries the live hand-over request of another process, if any (read in the same statement).
   */
  async renew(leases: readonly Fence[], ttlMs: number): Promise<Lease[]> {
    const renewed: Lease[] = [];
    const ttl = Math.max(1, Math.trunc(ttlMs));
    for (const lease of leases) {
      const now = dbNowMsSql(this.db);
      const row = await this.db
        .updateTable('account_leases')
        .set({ expires_at_ms: sql<number>`${now} + ${ttl}` })
        .where('account', '=', lease.account)
        .where('holder', '=', lease.holder)
        .where('epoch', '=', lease.epoch)
        .where('expires_at_ms', '>', now)
        .returning(['expires_at_ms', 'requested_by', 'requested_command', 'request_expires_at_ms', sql<number | string>`${now}`.as('now_ms')])
        .executeTakeFirst();
      if (!row) continue;
      const request = liveRequest(row, Number(row.now_ms));
      renewed.push({ ...lease, expiresAtMs: Number(row.expires_at_ms), handOverRequest: request && request.by !== lease.holder ? request : undefined });
    }
    return renewed;
  }

  /**
   * Gives leases up at once (after draining): free now, so another replica claims them on its next
   * poll instead of waiting for the expiry. Only rows still ours under the same epoch.
   */
  async release(leases: readonly Fence[]): Promise<number> {
    let released = 0;
    for (const lease of leases) {
      const result = await this.db
        .updateTable('account_leases')
        .set({ holder: null, holder_command: null, expires_at_ms: dbNowMsSql(this.db) })
        .where('account', '=', lease.account)
        .where('holder', '=', lease.holder)
        .where('epoch', '=', lease.epoch)
        .executeTakeFirst();
      released += Number(result.numUpdatedRows);
    }
    return released;
  }

  /**
   * Asks for the account's lease on behalf of a one-shot command (`requester` its holder id): for
   * `ttlMs` by the database clock, nobody else may claim it, and a `run` holder hands it over (it
   * sees the request at its next renewal). Re-asserting it extends it. Not recorded while another
   * process's request is alive: first come, first served; the caller waits and asks again.
   */
  async request(account: string, options: { requester: string; command: string; ttlMs: number }): Promise<RequestOutcome> {
    const { requester } = options;
    const ttl = Math.max(1, Math.trunc(options.ttlMs));
    return this.db.transaction().execute(async (trx) => {
      const now = dbNowMsSql(trx);
      await trx
        .insertInto('account_leases')
        .values({ account, holder: null, epoch: 0, expires_at_ms: 0 })
        .onConflict((oc) => oc.column('account').doNothing())
        .execute();
      const result = await trx
        .updateTable('account_leases')
        .set({ requested_by: requester, requested_command: options.command, request_expires_at_ms: sql<number>`${now} + ${ttl}` })
        .where('account', '=', account)
        .where(sql<boolean>`(requested_by is null or requested_by = ${requester} or request_expires_at_ms <= ${now})`)
        .executeTakeFirst();
      const [row] = await this.rows((q) => q.where('account', '=', account), trx);
      return { recorded: Number(result.numUpdatedRows) > 0, row: row! };
    });
  }

  /** Takes back `requester`'s request (it gave up waiting, or stopped). */
  async withdraw(account: string, requester: string): Promise<void> {
    await this.db
      .updateTable('account_leases')
      .set({ requested_by: null, requested_command: null, request_expires_at_ms: 0 })
      .where('account', '=', account)
      .where('requested_by', '=', requester)
      .execute();
  }

  /** The account's row as it is now (undefined when no process ever claimed or asked for it). */
  async row(account: string): Promise<LeaseRow | undefined> {
    return (await this.rows((q) => q.where('account', '=', account)))[0];
  }

  /**
   * Frees the account's lease (its epoch stays, so the next claim bumps it and the old holder's
   * fenced commits fail): held by `holder` when given, else by whoever holds it. Only for a caller
   * that knows the holder is gone: the one daemon of a SQLite file, started after its predecessor
   * was killed, need not wait for the TTL.
   */
  async forfeit(account: string, holder?: string): Promise<number> {
    let update = this.db
      .updateTable('account_leases')
      .set({ holder: null, holder_command: null, expires_at_ms: dbNowMsSql(this.db) })
      .where('account', '=', account)
      .where('holder', 'is not', null);
    if (holder !== undefined) update = update.where('holder', '=', holder);
    const result = await update.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Every lease row (status, readyz, metrics); compare `expiresAtMs` with `readDbNowMs`. */
  async list(): Promise<LeaseRow[]> {
    return this.rows((q) => q);
  }

  /** The leases held right now (a holder and a deadline not yet passed by the database clock). */
  async live(): Promise<LeaseRow[]> {
    return this.rows((q) => q.where('holder', 'is not', null).where('expires_at_ms', '>', dbNowMsSql(this.db)));
  }

  /** Lease rows (by account) with the database clock read in the same statement, so a request's liveness is judged by it. */
  private async rows(filter: (query: LeaseQuery) => LeaseQuery, db: Kysely<StateTables> = this.db): Promise<LeaseRow[]> {
    const rows = await filter(selectLeases(db)).orderBy('account').execute();
    return rows.map((row) => ({
      account: row.account,
      holder: row.holder,
      epoch: Number(row.epoch),
      expiresAtMs: Number(row.expires_at_ms),
      holderCommand: row.holder_command ?? null,
      request: liveRequest(row, Number(row.now_ms)),
    }));
  }

  /** How many unexpired leases `holder` has (what it already holds counts against its fair share). */
  async heldCount(holder: string): Promise<number> {
    const row = await this.db
      .selectFrom('account_leases')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('holder', '=', holder)
      .where('expires_at_ms', '>', dbNowMsSql(this.db))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

type LeaseQuery = ReturnType<typeof selectLeases>;

/** Every column plus the database clock of the same statement (`now_ms`). */
function selectLeases(db: Kysely<StateTables>) {
  return db.selectFrom('account_leases').selectAll().select(sql<number | string>`${dbNowMsSql(db)}`.as('now_ms'));
}

/** Not blocked by a live hand-over request of another process (a holder renewing its own lease never is). */
function notRequestedByOthers(holder: string, now: ReturnType<typeof dbNowMsSql>) {
  return sql<boolean>`(requested_by is null or requested_by = ${holder} or request_expires_at_ms <= ${now}
    or (holder = ${holder} and expires_at_ms > ${now}))`;
}

/** The row's hand-over request when it is still alive at `nowMs` (database clock). */
function liveRequest(
  row: { requested_by: string | null; requested_command: string | null; request_expires_at_ms: number | string },
  nowMs: number,
): HandOverRequest | undefined {
  const expiresAtMs = Number(row.request_expires_at_ms);
  if (row.requested_by === null || expiresAtMs <= nowMs) return undefined;
  return { by: row.requested_by, command: row.requested_command, expiresAtMs };
}
