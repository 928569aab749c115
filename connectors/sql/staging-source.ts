import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { CommandSource, InboundRequest, InboundResult, InboundUnit } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { withLockRetry } from './lock-retry.js';
import type { ContractLogger as Logger } from '../../src/contracts/index.js';
import type { AnyDb } from './connect.js';
import type { SqlDialectName } from './options.js';
import { qualified, type StatementContext } from './statements.js';

export interface StagingSettings {
  readonly table: string;
  readonly claimBatch: number;
  readonly claimTimeoutMs: number;
}

interface StagingRow {
  id: number | string;
  erp_key: string;
  kind: string;
  payload: string | null;
}

/** Timestamps as each driver binds them: SQLite stores ISO text, the others take a Date. */
function timestampValue(dialect: SqlDialectName, date: Date): unknown {
  return dialect === 'sqlite' ? date.toISOString() : date;
}

/**
 * The staging table as a command source. The ERP inserts rows with status `new`; `take` claims
 * up to `claimBatch` of them atomically with a claim token (UPDATE … WHERE status = 'new', with
 * FOR UPDATE SKIP LOCKED on PostgreSQL, so two daemons never claim the same row), `accepted`
 * marks them `queued` once the outbox holds them, and `writeBack` records the outcome. A row
 * left `claimed` by a crash is claimed again after `claimTimeout`; the outbox is keyed by ERP key,
 * so the second claim creates no second command.
 */
export class StagingSource implements CommandSource {
  constructor(
    private readonly db: AnyDb,
    private readonly ctx: StatementContext,
    private readonly settings: StagingSettings,
    private readonly logger: Logger,
  ) {}

  private get table(): string {
    return qualified(this.ctx, this.settings.table);
  }

  async take(signal: AbortSignal): Promise<InboundUnit[]> {
    throwIfAborted(signal);
    const { db, ctx } = this;
    const now = new Date();
    const stale = await withLockRetry(
      ctx.dialect,
      () =>
        db
          .updateTable(this.table)
          .set({ status: 'new', claim_token: null, claimed_at: null })
          .where('status', '=', 'claimed')
          .where('claimed_at', '<', timestampValue(ctx.dialect, new Date(now.getTime() - this.settings.claimTimeoutMs)))
          .executeTakeFirst(),
      signal,
    );
    if (Number(stale.numUpdatedRows) > 0) {
      this.logger.warn({ table: this.table, rows: Number(stale.numUpdatedRows) }, 'staging rows left claimed by an earlier run are claimed again');
    }

    // Two daemons claiming at once can deadlock on MySQL/MariaDB; the claim is one statement, so retrying is safe.
    return withLockRetry(ctx.dialect, () => this.claim(now, signal), signal, { attempts: 5, pauseMs: (attempt) => 20 * (attempt - 1) + Math.floor(Math.random() * 20) });
  }

  private async claim(now: Date, signal: AbortSignal): Promise<InboundUnit[]> {
    throwIfAborted(signal);
    const { db, ctx } = this;
    const token = randomUUID();
    const claim = { status: 'claimed', claim_token: token, claimed_at: timestampValue(ctx.dialect, now) };
    const limit = this.settings.claimBatch;
    if (ctx.dialect === 'mysql') {
      // MySQL cannot LIMIT a subquery inside IN; its single-table UPDATE takes ORDER BY and LIMIT itself.
      await db.updateTable(this.table).set(claim).where('status', '=', 'new').orderBy('id').limit(limit).execute();
    } else {
      let candidates = db.selectFrom(this.table).select('id').where('status', '=', 'new').orderBy('id');
      candidates = ctx.dialect === 'mssql' ? candidates.top(limit) : candidates.limit(limit);
      // `status = 'new'` again outside: a row another daemon claimed meanwhile is re-checked after its lock.
      if (ctx.dialect === 'postgres') {
        // ARRAY(...) runs the locking subquery exactly once; a plain IN may re-run it and claim more than the limit.
        const locked = candidates.forUpdate().skipLocked();
        await db.updateTable(this.table).set(claim).where('id', '=', sql<number>`any(array(${locked}))`).where('status', '=', 'new').execute();
      } else {
        await db.updateTable(this.table).set(claim).where('id', 'in', candidates).where('status', '=', 'new').execute();
      }
    }

    const rows = (await db
      .selectFrom(this.table)
      .select(['id', 'erp_key', 'kind', 'payload'])
      .where('claim_token', '=', token)
      .orderBy('id')
      .execute()) as StagingRow[];
    if (rows.length === 0) return [];
    const first = rows[0]!.id;
    const last = rows[rows.length - 1]!.id;
    return [{ id: `claim-${first}-${last}`, location: this.table, requests: rows.map(toRequest) }];
  }

  /**
   * `push --dry-run`: every `new` row, read without claiming it (a plain SELECT: the rows stay
   * `new`, no claim token, no result column written), in units of `claimBatch` rows as `take`
   * would claim them. Unit ids (`peek-<first>-<last>`) never collide with claim ids. Dry-run
   * outcomes are reported by the command, not written to the rows: the ERP reads the result
   * columns as final.
   */
  async peek(signal: AbortSignal): Promise<InboundUnit[]> {
    throwIfAborted(signal);
    const rows = (await this.db
      .selectFrom(this.table)
      .select(['id', 'erp_key', 'kind', 'payload'])
      .where('status', '=', 'new')
      .orderBy('id')
      .execute()) as StagingRow[];
    const units: InboundUnit[] = [];
    for (let i = 0; i < rows.length; i += this.settings.claimBatch) {
      const batch = rows.slice(i, i + this.settings.claimBatch);
      units.push({ id: `peek-${batch[0]!.id}-${batch[batch.length - 1]!.id}`, location: this.table, requests: batch.map(toRequest) });
    }
    return units;
  }

  async accepted(unit: InboundUnit, signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    const ids = unit.requests.map((r) => r.ref);
    if (ids.length === 0) return;
    await withLockRetry(this.ctx.dialect, () => this.db.updateTable(this.table).set({ status: 'queued' }).where('id', 'in', ids).where('status', '=', 'claimed').execute(), signal);
  }

  async writeBack(unitId: string, results: readonly InboundResult[], signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    if (results.length === 0) return;
    const { dialect } = this.ctx;
    await withLockRetry(dialect, () => this.writeBackOnce(results), signal);
    this.logger.debug({ table: this.table, unit: unitId, results: results.length }, 'staging results written back');
  }

  /** One transaction setting every result (the same values again when retried). */
  private async writeBackOnce(results: readonly InboundResult[]): Promise<void> {
    const { dialect } = this.ctx;
    await this.db.transaction().execute(async (trx) => {
      for (const result of results) {
        await trx
          .updateTable(this.table)
          .set({
            status: result.status,
            reference_number: result.referenceNumber ?? null,
            load_id: result.loadId ?? null,
            error: result.error ?? null,
            outbox_id: result.outboxId ?? null,
            finished_at: timestampValue(dialect, new Date(result.finishedAt)),
          })
          .where('id', '=', result.ref)
          .execute();
      }
    });
  }
}

function toRequest(row: StagingRow): InboundRequest {
  const ref = String(row.id);
  const base = { erp_key: row.erp_key, kind: row.kind };
  if (row.payload === null || row.payload === undefined || String(row.payload).trim() === '') return { ref, fields: base };
  let payload: unknown;
  try {
    payload = JSON.parse(String(row.payload));
  } catch (error) {
    return { ref, fields: base, problem: `payload is not valid JSON: ${(error as Error).message}` };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { ref, fields: base, problem: 'payload must be a JSON object with the command fields' };
  }
  // erp_key and kind come from their columns; a payload cannot override them.
  return { ref, fields: { ...(payload as Record<string, unknown>), ...base } };
}
