import { sql, type Kysely } from 'kysely';
import { dbNowMsSql, stateDialect } from '../db-clock.js';
import { StateError } from '../errors.js';
import type { StateTables } from '../tables.js';
import { leaseTableName } from './lease-table.js';

/**
 * The fencing token of one account lease (Kafka Connect style): writes made on behalf of the
 * account commit only while `holder` still holds the lease under this `epoch`.
 */
export interface Fence {
  readonly account: string;
  readonly holder: string;
  readonly epoch: number;
  /** The schema of the lease row when it is not the writer's own (several accounts on PostgreSQL). */
  readonly leaseSchema?: string | undefined;
}

/** A fenced write refused: the lease expired or was claimed by another replica; the transaction rolled back. */
export class LeaseLostError extends StateError {
  readonly account: string;
  readonly holder: string;
  readonly epoch: number;
  constructor(fence: Fence) {
    super(
      'STATE_LEASE_LOST',
      `lease of account ${fence.account} lost by ${fence.holder} (epoch ${fence.epoch}): it expired or another replica claimed it; nothing was committed`,
    );
    this.account = fence.account;
    this.holder = fence.holder;
    this.epoch = fence.epoch;
  }
}

export function isLeaseLostError(error: unknown): error is LeaseLostError {
  return error instanceof LeaseLostError;
}

/**
 * Checks, inside the open transaction `trx`, that the lease still holds; throws LeaseLostError
 * (so the transaction rolls back) when it does not. Called as the last statement before COMMIT.
 *
 * PostgreSQL: `FOR KEY SHARE` locks the lease row until our COMMIT. A claimer locks with
 * `FOR UPDATE SKIP LOCKED`, which conflicts with it, so from here to our commit it skips this
 * account; and if a claimer got there first, either it already committed (READ COMMITTED: we read
 * its new epoch and fail) or it holds the row lock (we wait for it, and PostgreSQL re-evaluates
 * our condition on the row it committed: we fail). Never both commit under one epoch.
 * The weakest lock that does this: a plain UPDATE that changes no key column (the holder's
 * renewal, another process's hand-over request) takes `FOR NO KEY UPDATE`, which does not
 * conflict with `FOR KEY SHARE` — with `FOR SHARE` a renewal queued behind every slow fenced
 * commit, and under load the holder's own clock cut leases that were still valid.
 *
 * SQLite: one writer at a time. The fenced work has written before this check (that is what it
 * fences), so this connection holds the write lock, and a connection holding the write lock in WAL
 * mode always reads the newest state (otherwise its first write fails with SQLITE_BUSY_SNAPSHOT).
 * No claim can commit between this read and our COMMIT. A transaction that wrote nothing may read
 * an older snapshot here, but it has nothing to commit.
 */
export async function assertLeaseHeld(trx: Kysely<StateTables>, fence: Fence): Promise<void> {
  const forKeyShare = stateDialect(trx) === 'postgres' ? sql` for key share` : sql``;
  const { rows } = await sql<{ ok: number }>`select 1 as ok from ${sql.table(leaseTableName(fence.leaseSchema))}
    where account = ${fence.account} and holder = ${fence.holder} and epoch = ${fence.epoch}
      and expires_at_ms > ${dbNowMsSql(trx)}${forKeyShare}`.execute(trx);
  if (rows.length === 0) throw new LeaseLostError(fence);
}

/**
 * Runs one write so that it commits only while the lease holds. Without a fence: the write as it
 * always ran (unfenced stores behave exactly as before). With one: inside `executor` when it is
 * already a transaction (the check then holds its lock until that transaction ends), else in a new
 * transaction that ends with the check.
 */
export async function fencedWrite<T>(
  executor: Kysely<StateTables>,
  fence: Fence | undefined,
  write: (executor: Kysely<StateTables>) => Promise<T>,
): Promise<T> {
  if (!fence) return write(executor);
  if (executor.isTransaction) {
    const out = await write(executor);
    await assertLeaseHeld(executor, fence);
    return out;
  }
  return executor.transaction().execute(async (trx) => {
    const out = await write(trx);
    await assertLeaseHeld(trx, fence);
    return out;
  });
}
