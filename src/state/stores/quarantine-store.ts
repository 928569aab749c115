import type { Kysely, Selectable } from 'kysely';
import { backoffCeiling } from '../../util/backoff.js';
import { chunks } from '../../util/chunks.js';
import type { QuarantineKind, QuarantineTable, StateTables } from '../tables.js';
import { StatementTexts } from './statement-texts.js';

export type QuarantineRow = Selectable<QuarantineTable>;

/** Wait before the first automatic re-delivery of a refused record; doubles per refusal up to the max. */
export const REDELIVERY_BASE_MS = 60_000;
export const REDELIVERY_MAX_MS = 6 * 3_600_000;

/** A list element the API layer refused (its schema, no key). */
export interface SchemaRejection {
  index: number;
  problem: string;
  raw: unknown;
  /** The record's key when it could be read, so a later good version supersedes the entry. */
  key?: string | null;
}

/** A record a sink refused. */
export interface SinkRefusal {
  key: string;
  sink: string;
  reason: string;
  /** The record's data as delivered (re-delivery rebuilds the record from it). */
  raw: unknown;
  hash: string;
  batchId: string;
}

/** What `entriesFor` reports per key. */
export interface HeldEntry {
  kind: QuarantineKind;
  sink: string;
  hash: string | null;
}

export interface QuarantineFilter {
  ids?: readonly number[];
  stream?: string;
  kinds?: readonly QuarantineKind[];
  limit?: number;
}

/** Keys per `in (…)` list: far below SQLite's parameter limit. */
const KEYS_PER_STATEMENT = 500;

/**
 * The one quarantine of the state database (table `quarantine`, migration 0005): records the API
 * schema refused, records a sink refused, webhook events parked as failed. Every method runs on
 * the executor the store is bound to, so the engine writes it in the transaction that commits the
 * batch's checkpoint: a crash never leaves a record neither delivered nor quarantined.
 */
export class QuarantineStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
    /** Shared by every store of one database (see StatementTexts). */
    private readonly texts: StatementTexts = new StatementTexts(),
  ) {}

  async recordSchemaRejections(stream: string, batchId: string, items: readonly SchemaRejection[]): Promise<void> {
    const at = this.now().toISOString();
    for (const item of items) {
      const values = {
        kind: 'api-schema' as const,
        stream,
        item_key: item.key ?? `${batchId}#${item.index}`,
        sink: '',
        reason: item.problem,
        raw: JSON.stringify(item.raw) ?? 'null',
        content_hash: null,
        batch_id: batchId,
        webhook_event_id: null,
        first_seen_at: at,
        last_seen_at: at,
        next_attempt_at: null,
      };
      await this.db
        .insertInto('quarantine')
        .values(values)
        .onConflict((oc) =>
          oc.columns(['kind', 'stream', 'item_key', 'sink']).doUpdateSet((eb) => ({
            reason: values.reason,
            raw: values.raw,
            batch_id: batchId,
            last_seen_at: at,
            attempts: eb('quarantine.attempts', '+', 1),
          })),
        )
        .execute();
    }
  }

  /**
   * Records refusals, one row per (record, sink). Refused again in the same version: one more
   * attempt, and a longer wait before the next automatic re-delivery. A new version refused
   * replaces the old one and starts counting again.
   */
  async recordSinkRefusals(stream: string, refusals: readonly SinkRefusal[]): Promise<void> {
    if (refusals.length === 0) return;
    const now = this.now();
    const at = now.toISOString();
    const existing = new Map<string, { attempts: number; hash: string | null }>();
    for (const part of chunks([...new Set(refusals.map((r) => r.key))], KEYS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('quarantine')
        .select(['item_key', 'sink', 'attempts', 'content_hash'])
        .where('kind', '=', 'sink')
        .where('stream', '=', stream)
        .where('item_key', 'in', part)
        .execute();
      for (const row of rows) existing.set(`${row.sink}\u0000${row.item_key}`, { attempts: row.attempts, hash: row.content_hash });
    }
    for (const refusal of refusals) {
      const before = existing.get(`${refusal.sink}\u0000${refusal.key}`);
      const attempts = before && before.hash === refusal.hash ? before.attempts + 1 : 1;
      const values = {
        reason: refusal.reason,
        raw: JSON.stringify(refusal.raw) ?? 'null',
        content_hash: refusal.hash,
        batch_id: refusal.batchId,
        attempts,
        last_seen_at: at,
        next_attempt_at: nextAttemptAt(now, attempts),
      };
      await this.db
        .insertInto('quarantine')
        .values({ kind: 'sink', stream, item_key: refusal.key, sink: refusal.sink, webhook_event_id: null, first_seen_at: at, ...values })
        .onConflict((oc) => oc.columns(['kind', 'stream', 'item_key', 'sink']).doUpdateSet(before && before.hash === refusal.hash ? values : { ...values, first_seen_at: at }))
        .execute();
    }
  }

  /**
   * The entries of these keys that a delivery of a new version affects: sink refusals (with the
   * version they hold) and API-schema rejections. Keys without entries are absent.
   */
  async entriesFor(stream: string, keys: readonly string[]): Promise<Map<string, HeldEntry[]>> {
    const held = new Map<string, HeldEntry[]>();
    for (const part of chunks([...new Set(keys)], KEYS_PER_STATEMENT)) {
      const { rows } = await this.texts.execute(this.db, `quarantine-held:${part.length}`, ['sink', 'api-schema', stream, ...part], () =>
        this.db
          .selectFrom('quarantine')
          .select(['item_key', 'kind', 'sink', 'content_hash'])
          .where('kind', 'in', ['sink', 'api-schema'])
          .where('stream', '=', stream)
          .where('item_key', 'in', part),
      );
      for (const row of rows) {
        const list = held.get(row.item_key) ?? [];
        list.push({ kind: row.kind, sink: row.sink, hash: row.content_hash });
        held.set(row.item_key, list);
      }
    }
    return held;
  }

  /** `sink` now has these keys (a newer version or the re-delivery landed): their entries for it go. */
  async resolveForSink(stream: string, sink: string, keys: readonly string[]): Promise<void> {
    for (const part of chunks([...new Set(keys)], KEYS_PER_STATEMENT)) {
      await this.db.deleteFrom('quarantine').where('kind', '=', 'sink').where('stream', '=', stream).where('sink', '=', sink).where('item_key', 'in', part).execute();
    }
  }

  /** Every sink has these keys: an API-schema entry of an earlier, malformed version goes too. */
  async resolveSchemaRejections(stream: string, keys: readonly string[]): Promise<void> {
    for (const part of chunks([...new Set(keys)], KEYS_PER_STATEMENT)) {
      await this.db.deleteFrom('quarantine').where('kind', '=', 'api-schema').where('stream', '=', stream).where('item_key', 'in', part).execute();
    }
  }

  /** Keys of `keys` some sink still waits for (after a re-delivery to one sink landed). */
  async keysStillHeld(stream: string, keys: readonly string[]): Promise<Set<string>> {
    const entries = await this.entriesFor(stream, keys);
    return new Set([...entries].filter(([, list]) => list.some((e) => e.kind === 'sink')).map(([key]) => key));
  }

  /** Sink entries of a stream whose automatic re-delivery is due, oldest first. */
  async dueSinkEntries(stream: string, limit: number): Promise<QuarantineRow[]> {
    return this.db
      .selectFrom('quarantine')
      .selectAll()
      .where('kind', '=', 'sink')
      .where('stream', '=', stream)
      .where('next_attempt_at', '<=', this.now().toISOString())
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Refused again on re-delivery (or the sink failed): one more attempt, a longer wait. */
  async postpone(ids: readonly number[], reason: string | null): Promise<void> {
    const now = this.now();
    for (const id of ids) {
      const row = await this.db.selectFrom('quarantine').select('attempts').where('id', '=', id).executeTakeFirst();
      if (!row) continue;
      const attempts = row.attempts + 1;
      await this.db
        .updateTable('quarantine')
        .set({ attempts, last_seen_at: now.toISOString(), next_attempt_at: nextAttemptAt(now, attempts), ...(reason === null ? {} : { reason }) })
        .where('id', '=', id)
        .execute();
    }
  }

  /** A webhook event parked as failed. */
  async recordWebhookFailure(event: { id: number; key: string; stream: string; reason: string; body: string; attempts: number }): Promise<void> {
    const at = this.now().toISOString();
    const values = { reason: event.reason, raw: event.body, attempts: event.attempts, last_seen_at: at, webhook_event_id: event.id };
    await this.db
      .insertInto('quarantine')
      .values({ kind: 'webhook', stream: event.stream, item_key: event.key, sink: '', content_hash: null, batch_id: null, first_seen_at: at, next_attempt_at: null, ...values })
      .onConflict((oc) => oc.columns(['kind', 'stream', 'item_key', 'sink']).doUpdateSet(values))
      .execute();
  }

  /** Webhook events processed after all: their entries go. */
  async resolveWebhookEvents(eventIds: readonly number[]): Promise<void> {
    for (const part of chunks([...eventIds], KEYS_PER_STATEMENT)) {
      await this.db.deleteFrom('quarantine').where('kind', '=', 'webhook').where('webhook_event_id', 'in', part).execute();
    }
  }

  async list(filter: QuarantineFilter = {}): Promise<QuarantineRow[]> {
    let query = this.db.selectFrom('quarantine').selectAll();
    if (filter.ids) query = query.where('id', 'in', filter.ids.length > 0 ? [...filter.ids] : [-1]);
    if (filter.stream) query = query.where('stream', '=', filter.stream);
    if (filter.kinds) query = query.where('kind', 'in', filter.kinds.length > 0 ? [...filter.kinds] : ['none' as QuarantineKind]);
    query = query.orderBy('id');
    if (filter.limit) query = query.limit(filter.limit);
    return query.execute();
  }

  async get(id: number): Promise<QuarantineRow | undefined> {
    return this.db.selectFrom('quarantine').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async remove(ids: readonly number[]): Promise<number> {
    let removed = 0;
    for (const part of chunks([...ids], KEYS_PER_STATEMENT)) {
      const result = await this.db.deleteFrom('quarantine').where('id', 'in', part).executeTakeFirst();
      removed += Number(result.numDeletedRows);
    }
    return removed;
  }

  /** Entries per stream and kind (status, metrics). */
  async counts(): Promise<Array<{ stream: string; kind: QuarantineKind; count: number }>> {
    const rows = await this.db
      .selectFrom('quarantine')
      .select(['stream', 'kind', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['stream', 'kind'])
      .execute();
    return rows.map((r) => ({ stream: r.stream, kind: r.kind, count: Number(r.n) }));
  }
}

function nextAttemptAt(now: Date, attempts: number): string {
  return new Date(now.getTime() + backoffCeiling({ attempt: attempts - 1, baseMs: REDELIVERY_BASE_MS, maxMs: REDELIVERY_MAX_MS })).toISOString();
}
