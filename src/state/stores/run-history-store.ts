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

  /** When the stream last finished a run successfully (ISO), if it ever did. */
  async lastSuccessAt(stream: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .select('finished_at')
      .where('stream', '=', stream)
      .where('status', '=', 'ok')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.finished_at ?? undefined;
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
