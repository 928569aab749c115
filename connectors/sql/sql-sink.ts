import { mappingRejections, type ContractLogger as Logger, type RecordBatch, type RecordMappingError, type RecordSink, type SinkAck, type StreamMapper, type SyncRecord } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import type { AnyDb } from './connect.js';
import { classifyDbError, columnOfError } from './db-errors.js';
import { canWriteInOneStatement, writeBatchInOneStatement } from './batch-statement.js';
import { clearSyncErrors, insertSyncErrors, type SyncErrorRow } from './errors-table.js';
import { groupRecords, type RecordGroup } from './record-groups.js';
import { SqlRowError } from './row-error.js';
import type { StatementContext } from './statements.js';
import type { StreamPlan } from './table-plan.js';
import { TableWriteError, writeGroups } from './write-groups.js';
import type { SqlOptions } from './options.js';
import { withLockRetry } from './lock-retry.js';

export interface SqlSinkDeps {
  readonly db: AnyDb;
  readonly ctx: StatementContext;
  readonly options: Pick<SqlOptions, 'deleteMode' | 'onRowError' | 'textLength'>;
  readonly errorsTable: string;
  readonly logger: Logger;
  /** The stream's mapper and its (ensured) tables. */
  readonly streamFor: (stream: string) => Promise<{ mapper: StreamMapper; plan: StreamPlan }>;
}

/** Deadlocks and lock timeouts between two writers: the whole batch is retried this many times. */
const MAX_ATTEMPTS = 4;

interface Rejection {
  readonly group: RecordGroup;
  readonly error: SqlRowError;
}

/**
 * Upserts each batch in ONE transaction and resolves only after COMMIT (the acknowledgement). On
 * PostgreSQL and MariaDB a clean batch is one statement (BEGIN, statement, COMMIT: three round
 * trips; see batch-statement.ts); elsewhere one statement per table. A row the database refuses
 * does not take the batch with it: the batch is rolled back and written again record by record,
 * each in its own savepoint; the rest commits.
 * Refused records — and records that failed to map — are named in the acknowledgement
 * (`{ rejected }`), so the engine quarantines and re-delivers them; they are also mirrored into
 * the errors table (same transaction) and the log. Errors that are not about a row's data
 * (connection, missing table) fail the write, so the stream retries and loses nothing.
 */
export class SqlSink implements RecordSink {
  constructor(private readonly deps: SqlSinkDeps) {}

  async write(batch: RecordBatch, signal: AbortSignal): Promise<SinkAck> {
    throwIfAborted(signal);
    const { mapper, plan } = await this.deps.streamFor(batch.stream);
    const { batch: mapped, errors } = mapper.map(batch);
    for (const { errors: problems } of errors) {
      for (const problem of problems) {
        this.deps.logger.error({ stream: problem.stream, key: problem.key, table: problem.table, column: problem.column, batchId: batch.batchId }, problem.message);
      }
    }
    if (errors.length > 0 && this.deps.options.onRowError === 'fail') throw errors[0]!.errors[0];
    const groups = groupRecords(mapped, batch.records, errors, plan);
    const mappingRows = mappingErrorRows(batch.batchId, errors, mapper);

    const { dialect } = this.deps.ctx;
    try {
      const refused = await withLockRetry(dialect, () => this.writeOnce(batch, plan, mapper, groups, mappingRows, signal), signal, {
        attempts: MAX_ATTEMPTS,
        // A failed table write is retried when what failed it is.
        causeOf: (error) => (error instanceof TableWriteError ? error.cause : error),
        onRetry: (error, attempt) => {
          // A SQLite file another writer holds is retried every few ms: said once, not per try.
          if (dialect === 'sqlite' && attempt > 1) return;
          const message = dialect === 'sqlite' ? 'sql batch waits for another writer of the SQLite file; retrying' : 'sql batch hit a deadlock or lock timeout; retrying';
          this.deps.logger.warn({ stream: batch.stream, batchId: batch.batchId, attempt, err: error instanceof TableWriteError ? error.cause : error }, message);
        },
      });
      return { rejected: [...mappingRejections(errors), ...refused.map((r) => ({ key: r.group.record.key, reason: r.error.message }))] };
    } catch (error) {
      throw describeFailure(error, batch.stream);
    }
  }

  private async writeOnce(
    batch: RecordBatch,
    plan: StreamPlan,
    mapper: StreamMapper,
    groups: readonly RecordGroup[],
    mappingRows: readonly SyncErrorRow[],
    signal: AbortSignal,
  ): Promise<Rejection[]> {
    const { db, ctx, options } = this.deps;
    if (canWriteInOneStatement(ctx, plan, groups, options.deleteMode) && ctx.dialect === 'postgres' && mappingRows.length === 0) {
      // One statement is one transaction on PostgreSQL, and the statement itself fails when a
      // record lost to a newer version (statements.ts, everyRecordWon): no BEGIN and COMMIT
      // round trips. With mapping errors to record as well, the transaction below holds both.
      try {
        throwIfAborted(signal);
        if (await writeBatchInOneStatement(db, ctx, plan, groups, { table: this.deps.errorsTable, stream: batch.stream })) return [];
      } catch (error) {
        if (signal.aborted || classifyDbError(ctx.dialect, error).retryable) throw error;
        this.deps.logger.debug({ stream: batch.stream, batchId: batch.batchId, err: error }, 'sql batch statement failed; writing table by table');
      }
      return this.writeIsolating(batch, plan, mapper, groups, mappingRows, signal);
    }
    if (canWriteInOneStatement(ctx, plan, groups, options.deleteMode)) {
      const trx = await db.startTransaction().execute();
      let done = false;
      try {
        if (await writeBatchInOneStatement(trx, ctx, plan, groups, { table: this.deps.errorsTable, stream: batch.stream })) {
          await insertSyncErrors(trx, ctx, this.deps.errorsTable, mappingRows, options.textLength);
          throwIfAborted(signal);
          await trx.commit().execute();
          done = true;
          return [];
        }
        // A late, older version is in the batch: the statement-per-table path keeps its children out.
      } catch (error) {
        // Retryable (deadlock) or aborted: the caller decides. Anything else — a refused row, or a
        // statement this database would not take — is settled by the statement-per-table path,
        // which isolates the refused records (or fails the batch with the real error).
        if (signal.aborted || classifyDbError(ctx.dialect, error).retryable) throw error;
        this.deps.logger.debug({ stream: batch.stream, batchId: batch.batchId, err: error }, 'sql batch statement failed; writing table by table');
      } finally {
        if (!done) await trx.rollback().execute().catch(() => undefined);
      }
    }
    return this.writeIsolating(batch, plan, mapper, groups, mappingRows, signal);
  }

  /**
   * The statement-per-table path: the whole batch in a savepoint first, and on a refused row, each
   * record in its own savepoint; the rest commits.
   */
  private async writeIsolating(
    batch: RecordBatch,
    plan: StreamPlan,
    mapper: StreamMapper,
    groups: readonly RecordGroup[],
    mappingRows: readonly SyncErrorRow[],
    signal: AbortSignal,
  ): Promise<Rejection[]> {
    const { db, ctx, options } = this.deps;
    const settings = { ctx, deleteMode: options.deleteMode };
    const trx = await db.startTransaction().execute();
    let done = false;
    try {
      const rejections: Rejection[] = [];
      const batchPoint = await trx.savepoint('batch').execute();
      try {
        await writeGroups(batchPoint, plan, groups, settings, signal);
        await this.release(batchPoint, 'batch');
      } catch (error) {
        if (!this.isRowDataError(error)) throw error;
        await batchPoint.rollbackToSavepoint('batch').execute();
        for (const group of groups) {
          throwIfAborted(signal);
          const rowPoint = await trx.savepoint('row').execute();
          try {
            await writeGroups(rowPoint, plan, [group], settings, signal);
            await this.release(rowPoint, 'row');
          } catch (rowError) {
            if (!this.isRowDataError(rowError)) throw rowError;
            await rowPoint.rollbackToSavepoint('row').execute();
            await this.release(rowPoint, 'row');
            rejections.push({ group, error: this.rowError(batch.stream, group, rowError) });
          }
        }
      }
      if (rejections.length > 0 && options.onRowError === 'fail') throw rejections[0]!.error;
      const reportRows = [...mappingRows, ...rejections.map((r) => rejectionRow(batch.batchId, r, mapper))];
      const refused = new Set(rejections.map((r) => r.group));
      const written = groups.filter((g) => !refused.has(g)).map((g) => g.record.key);
      await clearSyncErrors(trx, ctx, this.deps.errorsTable, batch.stream, written);
      await insertSyncErrors(trx, ctx, this.deps.errorsTable, reportRows, options.textLength);
      throwIfAborted(signal);
      await trx.commit().execute();
      done = true;
      for (const { error } of rejections) {
        this.deps.logger.error({ stream: error.stream, key: error.key, table: error.table, column: error.column, batchId: batch.batchId }, error.message);
      }
      return rejections;
    } finally {
      if (!done) await trx.rollback().execute().catch(() => undefined);
    }
  }

  private isRowDataError(error: unknown): boolean {
    const cause = error instanceof TableWriteError ? error.cause : error;
    return classifyDbError(this.deps.ctx.dialect, cause).dataError;
  }

  /** SQL Server has no RELEASE SAVEPOINT (a savepoint simply ends with the transaction). */
  private async release(point: unknown, name: string): Promise<void> {
    if (this.deps.ctx.dialect === 'mssql') return;
    await (point as unknown as { releaseSavepoint(n: string): { execute(): Promise<unknown> } }).releaseSavepoint(name).execute();
  }

  private rowError(stream: string, group: RecordGroup, error: unknown): SqlRowError {
    const failure = error instanceof TableWriteError ? error : undefined;
    const cause = failure ? failure.cause : error;
    const table = failure?.table;
    let column: string | undefined;
    if (table) {
      const rows = failure.rows.length > 0 ? failure.rows : [group.root];
      for (const row of rows) {
        column = columnOfError(cause, row, table.columns);
        if (column) break;
      }
      column ??= columnOfError(cause, undefined, table.columns);
    }
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new SqlRowError({ stream, key: group.record.key, table: table?.name ?? '', column, reason }, { cause });
  }
}

function describeFailure(error: unknown, stream: string): unknown {
  if (!(error instanceof TableWriteError)) return error;
  const cause = error.cause instanceof Error ? error.cause : new Error(String(error.cause));
  cause.message = `stream ${stream}, table ${error.table.name}: ${cause.message}`;
  return cause;
}

function rawOf(record: SyncRecord, mapper: StreamMapper): string {
  return JSON.stringify(mapper.rawOf(record));
}

function mappingErrorRows(batchId: string, errors: readonly RecordMappingError[], mapper: StreamMapper): SyncErrorRow[] {
  const at = new Date().toISOString();
  return errors.flatMap(({ record, errors: problems }) => {
    const raw = rawOf(record, mapper);
    return problems.map((problem) => ({
      stream: record.stream,
      batch_id: batchId,
      record_key: record.key,
      op: record.op,
      updated_at: record.updatedAt,
      table_name: problem.table,
      column_name: problem.column,
      message: problem.message,
      raw,
      at,
    }));
  });
}

function rejectionRow(batchId: string, rejection: Rejection, mapper: StreamMapper): SyncErrorRow {
  const { group, error } = rejection;
  return {
    stream: error.stream,
    batch_id: batchId,
    record_key: error.key,
    op: group.record.op,
    updated_at: group.record.updatedAt,
    table_name: error.table,
    column_name: error.column ?? null,
    message: error.message,
    raw: rawOf(group.record, mapper),
    at: new Date().toISOString(),
  };
}
