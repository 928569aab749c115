import type { Kysely } from 'kysely';
import type { RunStatus, StateTables } from '../tables.js';
import { StateError } from '../errors.js';

export interface RunOutcome {
  status: Exclude<RunStatus, 'running'>;
  records: number;
  /** Records the run quarantined. */
  rejected?: number;
  pages: number;
  requests: number;
  error?: string | null;
  /** Where the checkpoint stood at the end, and its lag behind the server clock (seconds). */
  checkpointAt?: string | null;
  lagSeconds?: number | null;
}

export interface RunRecord {
  id: number;
  stream: string;
  command: string;
  startedAt: string;
  finishedAt: string | null;
  status: RunStatus;
  records: number;
  rejected: number;
  pages: number;
  requests: number;
  error: string | null;
  checkpointAt: string | null;
  lagSeconds: number | null;
}

/** One row per stream run, for `status` and troubleshooting. */
export class RunHistoryStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async start(stream: string, command: string): Promise<number> {
    const row = await this.db
      .insertInto('runs')
      .values({
        stream,
        command,
        started_at: this.now().toISOString(),
        finished_at: null,
        status: 'running',
        records: 0,
        pages: 0,
        requests: 0,
        error: null,
        checkpoint_at: null,
        lag_seconds: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async finish(id: number, outcome: RunOutcome): Promise<void> {
    const result = await this.db
      .updateTable('runs')
      .set({
        finished_at: this.now().toISOString(),
        status: outcome.status,
        records: outcome.records,
        rejected: outcome.rejected ?? 0,
        pages: outcome.pages,
        requests: outcome.requests,
        error: outcome.error ?? null,
        checkpoint_at: outcome.checkpointAt ?? null,
        lag_seconds: outcome.lagSeconds ?? null,
      })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new StateError('STATE_RUN_UNKNOWN', `run ${id} does not exist`);
  }

  async last(stream: string): Promise<RunRecord | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('stream', '=', stream)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /**
   * When each stream last finished a run without error, counting the runs that move its own
   * checkpoint (`run`, `sync`, …) and not `backfill`, which re-reads a past range.
   */
  async lastSuccesses(): Promise<Array<{ stream: string; finishedAt: string }>> {
    const rows = await this.db
      .selectFrom('runs')
      .select(['stream', (eb) => eb.fn.max('finished_at').as('finished_at')])
      .where('status', '=', 'ok')
      .where('command', '!=', 'backfill')
      .where('finished_at', 'is not', null)
      .groupBy('stream')
      .execute();
    return rows.filter((r) => r.finished_at !== null).map((r) => ({ stream: r.stream, finishedAt: String(r.finished_at) }));
  }

  /** The newest finished runs of one stream (ok or failed; aborted and running ones are no verdict), newest first. */
  async lastVerdicts(stream: string, limit: number): Promise<RunRecord[]> {
    const rows = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('stream', '=', stream)
      .where('status', 'in', ['ok', 'failed'])
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** The newest runs, of one stream or all; `failedOnly`: runs that failed (the console's error list). */
  async recent(limit: number, filter: { stream?: string; failedOnly?: boolean } = {}): Promise<RunRecord[]> {
    let query = this.db.selectFrom('runs').selectAll();
    if (filter.stream) query = query.where('stream', '=', filter.stream);
    if (filter.failedOnly) query = query.where('status', '=', 'failed');
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** Runs of a stream started at or after `since` (ISO), oldest first: the console's charts. */
  async since(stream: string, since: string): Promise<RunRecord[]> {
    const rows = await this.db.selectFrom('runs').selectAll().where('stream', '=', stream).where('started_at', '>=', since).orderBy('id').execute();
    return rows.map(toRecord);
  }
}

function toRecord(row: {
  id: number;
  stream: string;
  command: string;
  started_at: string;
  finished_at: string | null;
  status: RunStatus;
  records: number;
  rejected: number;
  pages: number;
  requests: number;
  error: string | null;
  checkpoint_at: string | null;
  lag_seconds: number | null;
}): RunRecord {
  return {
    id: row.id,
    stream: row.stream,
    command: row.command,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    status: row.status,
    records: row.records,
    rejected: row.rejected,
    pages: row.pages,
    requests: row.requests,
    error: row.error,
    checkpointAt: row.checkpoint_at,
    lagSeconds: row.lag_seconds,
  };
}
