import type { Kysely } from 'kysely';
import { chunks } from '../../util/chunks.js';
import type { StateTables } from '../tables.js';
import type { StateExecutor } from './checkpoint-store.js';
import { StatementTexts } from './statement-texts.js';

export interface SeenItem {
  key: string;
  /** Hash of the record's content; equal hashes mean the sink already has this version. */
  hash: string;
}

/**
 * Bound parameters per statement. SQLite before 3.32 allows 999 and PostgreSQL 65535; staying
 * well under both keeps every dialect happy without asking the driver.
 */
const MAX_PARAMETERS = 900;
const KEYS_PER_SELECT = MAX_PARAMETERS - 1; // one parameter for the stream
const ROWS_PER_UPSERT = Math.floor(MAX_PARAMETERS / 4); // four columns per row

/**
 * Remembers the content hash of every record delivered per stream, so records re-delivered by
 * overlapping windows (lookback) are dropped unless their content changed.
 */
export class SeenRecordStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
    /** Shared by every store of one database (see StatementTexts). */
    private readonly texts: StatementTexts = new StatementTexts(),
  ) {}

  /** Keys (in input order, once each) that are new or whose hash differs from the stored one. */
  async filterChanged(stream: string, items: readonly SeenItem[], trx?: StateExecutor): Promise<string[]> {
    const latest = lastByKey(items);
    const keys = [...latest.keys()];
    const stored = new Map<string, string>();
    const executor = trx ?? this.db;
    for (const chunk of chunks(keys, KEYS_PER_SELECT)) {
      const { rows } = await this.texts.execute(executor, `seen-select:${chunk.length}`, [stream, ...chunk], () =>
        executor.selectFrom('seen_records').select(['key', 'content_hash']).where('stream', '=', stream).where('key', 'in', chunk),
      );
      for (const row of rows) stored.set(row.key, row.content_hash);
    }
    return keys.filter((key) => stored.get(key) !== latest.get(key));
  }

  /**
   * Upserts the hashes. Pass the transaction that also commits the checkpoint, so a crash never
   * leaves records marked as seen that the checkpoint would re-read (or the reverse).
   */
  async remember(stream: string, items: readonly SeenItem[], trx?: StateExecutor): Promise<void> {
    const latest = lastByKey(items);
    if (latest.size === 0) return;
    const updatedAt = this.now().toISOString();
    const rows = [...latest].map(([key, hash]) => ({ stream, key, content_hash: hash, updated_at: updatedAt }));
    const write = async (executor: StateExecutor) => {
      for (const chunk of chunks(rows, ROWS_PER_UPSERT)) {
        const parameters = chunk.flatMap((row) => [row.stream, row.key, row.content_hash, row.updated_at]);
        await this.texts.execute(executor, `seen-upsert:${chunk.length}`, parameters, () =>
          executor
            .insertInto('seen_records')
            .values(chunk)
            .onConflict((oc) =>
              oc.columns(['stream', 'key']).doUpdateSet((eb) => ({
                content_hash: eb.ref('excluded.content_hash'),
                updated_at: eb.ref('excluded.updated_at'),
              })),
            ),
        );
      }
    };
    if (trx) await write(trx);
    // A store bound to a transaction (StateStores.transaction) writes inside it.
    else if (this.db.isTransaction) await write(this.db);
    else await this.db.transaction().execute(write);
  }

  /**
   * Forgets single keys, so their next delivery reaches the sinks even with unchanged content
   * (`reconcile --repair`: a sink lost or altered a row the store says it has).
   */
  async forgetKeys(stream: string, keys: readonly string[], trx?: StateExecutor): Promise<void> {
    for (const chunk of chunks(keys, KEYS_PER_SELECT)) {
      await (trx ?? this.db).deleteFrom('seen_records').where('stream', '=', stream).where('key', 'in', chunk).execute();
    }
  }

  /** Drops a stream's memory (a full re-sync re-delivers everything). */
  async forget(stream: string, trx?: StateExecutor): Promise<void> {
    await (trx ?? this.db).deleteFrom('seen_records').where('stream', '=', stream).execute();
  }
}

/** The last hash given for each key: a batch may carry one record twice. */
function lastByKey(items: readonly SeenItem[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of items) out.set(item.key, item.hash);
  return out;
}
