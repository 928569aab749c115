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

  async recent(limit: number): Promise<RunRecord[]> {
    const rows = await this.db.selectFrom('runs').selectAll().orderBy('id', 'desc').limit(limit).execute();
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
  };
}
