import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { StateTables } from '../tables.js';
import { StateError } from '../errors.js';
import { fencedWrite, type Fence } from '../leases/fence.js';

/** A database handle or an open transaction (Kysely's Transaction is a Kysely). */
export type StateExecutor = Kysely<StateTables>;

export interface CheckpointEntry {
  stream: string;
  /** Parsed JSON, not validated: for `status` listings. Use `get` with a schema to use it. */
  cursor: unknown;
  updatedAt: string;
}

/**
 * Each stream's cursor, stored as JSON. The stream definition owns the cursor's shape and passes
 * its zod schema, so a cursor written by an older version or edited by hand fails loudly, naming
 * the stream, instead of silently restarting or skipping data.
 */
export class CheckpointStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
    /** Given: every checkpoint write commits only while this account lease holds (LeaseLostError otherwise). */
    private readonly fence?: Fence,
  ) {}

  async get<T>(stream: string, schema: z.ZodType<T>, trx?: StateExecutor): Promise<T | undefined> {
    const row = await (trx ?? this.db)
      .selectFrom('checkpoints')
      .select('cursor')
      .where('stream', '=', stream)
      .executeTakeFirst();
    if (!row) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(row.cursor);
    } catch (error) {
      throw new StateError('STATE_CHECKPOINT_INVALID', `checkpoint of stream "${stream}" is not valid JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const detail = parsed.error.issues
        .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(cursor)'}: ${issue.message}`)
        .join('; ');
      throw new StateError('STATE_CHECKPOINT_INVALID', `checkpoint of stream "${stream}" does not match its cursor schema: ${detail}`);
    }
    return parsed.data;
  }

  /**
   * Validates, then upserts. Pass the transaction that also records the batch's effects
   * (seen records, run counters) so the checkpoint moves only together with them.
   */
  async set<T>(stream: string, cursor: T, schema: z.ZodType<T>, trx?: StateExecutor): Promise<void> {
    const parsed = schema.safeParse(cursor);
    if (!parsed.success) {
      throw new StateError(
        'STATE_CHECKPOINT_INVALID',
        `refusing to store an invalid checkpoint for stream "${stream}": ${parsed.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const values = { cursor: JSON.stringify(cursor), updated_at: this.now().toISOString() };
    await fencedWrite(trx ?? this.db, this.fence, (executor) =>
      executor
        .insertInto('checkpoints')
        .values({ stream, ...values })
        .onConflict((oc) => oc.column('stream').doUpdateSet(values))
        .execute(),
    );
  }

  async list(trx?: StateExecutor): Promise<CheckpointEntry[]> {
    const rows = await (trx ?? this.db).selectFrom('checkpoints').selectAll().orderBy('stream').execute();
    return rows.map((row) => ({ stream: row.stream, cursor: safeJson(row.cursor), updatedAt: row.updated_at }));
  }

  /** Forgets a stream's position: its next run starts again from `initialFrom`. */
  async delete(stream: string, trx?: StateExecutor): Promise<boolean> {
    const result = await fencedWrite(trx ?? this.db, this.fence, (executor) => executor.deleteFrom('checkpoints').where('stream', '=', stream).executeTakeFirst());
    return Number(result.numDeletedRows) > 0;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
