import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import type { StateTables, WebhookInboxState, WebhookInboxTable } from '../tables.js';
import { chunks } from '../../util/chunks.js';
import { QuarantineStore } from './quarantine-store.js';
import { assertLeaseHeld, fencedWrite, type Fence } from '../leases/fence.js';

/** Rows taken per subject on average at most (a subject with more keeps the rest for the next batch). */
const ROWS_PER_SUBJECT = 50;
const IDS_PER_STATEMENT = 500;

export type InboxRow = Selectable<WebhookInboxTable>;

export interface InboxEntry {
  key: string;
  eventType: string;
  family: string;
  referenceNumber: string | null;
  body: string;
  source: 'delivery' | 'log';
  occurredAt: string | null;
  receivedAt: string;
}

/**
 * `stored`: new. `duplicate`: no new row — a repeat of an event id within the dedupe window, an
 * event a pending row's refresh covers (that row is armed again, in case its refresh is already in
 * flight), or an event-log entry an earlier refresh covered. `rearmed`: a processed (or parked)
 * row made pending again.
 */
export type AcceptOutcome = 'stored' | 'duplicate' | 'rearmed';

/** A row as the processor took it: settled only while `arm_count` is still this (see `accept`). */
export type TakenRow = Pick<InboxRow, 'id' | 'arm_count'>;

/**
 * The durable webhook inbox (table `webhook_inbox`). The receiver's group commit (`acceptMany`, the
 * deliveries that arrived together in one transaction) commits before it answers 200. The commit is a WAL commit (synchronous=NORMAL): it survives a crash of the process. It is
 * deliberately not fsync'd per delivery (synchronous=FULL): the sender delivers one event at a
 * time, so an fsync per event would cap throughput and make every later event wait. A power cut
 * can lose the last commits; the catch-up then re-reads the event log from the position its last
 * read reached on disk (minus its overlap): a power cut loses the newest commits, so that position
 * is older than every lost delivery, and those events come back from the log.
 */
export class WebhookInboxStore {
  constructor(
    private readonly db: Kysely<StateTables>,
    /**
     * Given: the transitions of processing (`markDone`, `markFailed`, `rearm`) commit only while this
     * account lease holds. Never `accept`: any replica receives webhooks, lease or not.
     */
    private readonly fence?: Fence,
  ) {}

  async accept(entry: InboxEntry, dedupeWindowMs: number): Promise<AcceptOutcome> {
    // One autocommit INSERT on the hot path (no BEGIN/COMMIT round trips); the rarer duplicate
    // path reads and maybe re-arms, which is safe without a transaction (same key, idempotent).
    return acceptOne(this.db, entry, dedupeWindowMs);
  }

  /** Stores several entries in one transaction (the receiver's group commit; the catch-up's pages of the log). */
  async acceptMany(entries: readonly InboxEntry[], dedupeWindowMs: number): Promise<AcceptOutcome[]> {
    if (entries.length === 0) return [];
    // New rows go in one multi-row statement per chunk, in arrival order (ids keep the order of
    // arrival, which `due` relies on), so the transaction stays short; only keys already present
    // take the duplicate path, one by one. Two replicas storing overlapping events (a sender's
    // retry reaching both, each one's catch-up reading the same log page) can still lock them in
    // opposite orders: PostgreSQL then aborts one with a deadlock, and that group is stored again.
    const firsts = new Map<string, number>();
    entries.forEach((entry, index) => {
      if (!firsts.has(entry.key)) firsts.set(entry.key, index);
    });
    const unique = [...firsts.values()].map((index) => entries[index]!);
    return retryOnDeadlock(() =>
      this.db.transaction().execute(async (trx) => {
        const stored = new Set<string>();
        for (let i = 0; i < unique.length; i += ACCEPT_CHUNK) {
          const rows = await trx
            .insertInto('webhook_inbox')
            .values(unique.slice(i, i + ACCEPT_CHUNK).map(pendingRow))
            .onConflict((oc) => oc.column('event_key').doNothing())
            .returning('event_key')
            .execute();
          for (const row of rows) stored.add(row.event_key);
        }
        // The first entry of a key this statement inserted is stored; every other (a key already
        // present, or the same key again in this group) takes the duplicate path — in key order,
        // since it may update the row: two groups locking rows in one order cannot deadlock.
        const outcomes: AcceptOutcome[] = entries.map((entry, index) => (firsts.get(entry.key) === index && stored.has(entry.key) ? 'stored' : 'duplicate'));
        const existing = [...entries.keys()].filter((index) => outcomes[index] !== 'stored');
        existing.sort((a, b) => (entries[a]!.key < entries[b]!.key ? -1 : entries[a]!.key > entries[b]!.key ? 1 : a - b));
        for (const index of existing) outcomes[index] = await acceptExisting(trx, entries[index]!, dedupeWindowMs);
        return outcomes;
      }),
    );
  }

  /**
   * The due work for the `subjects` subjects waiting longest: every pending, due row of each
   * (oldest first, at most `maxRows`). A subject is the load an event names (`reference_number`),
   * or the row alone when it names none. Subjects are ordered by the age of their oldest due event
   * (when it happened for event-log rows, when it arrived for deliveries), so a burst of events for
   * one load is taken — and refreshed once — together with that load's first event, a change the
   * catch-up read from the event log is not queued behind a burst that arrived after it, and a
   * subject that has waited longer is never overtaken (no starvation). `exclude`: subjects left
   * out (those of the batch in delivery; they come back in the batch after it).
   */
  async due(subjects: number, now: string, maxRows = subjects * ROWS_PER_SUBJECT, exclude: readonly string[] = []): Promise<InboxRow[]> {
    const subject = sql<string>`coalesce(reference_number, '#' || id)`;
    return this.db
      .with('oldest', (db) =>
        db
          .selectFrom('webhook_inbox')
          .select([subject.as('subject'), sql<string>`min(coalesce(occurred_at, received_at))`.as('since'), (eb) => eb.fn.min<number>('id').as('first_id')])
          .where('state', '=', 'pending')
          .where(isDue(now))
          // Subjects of the batch still in delivery (the processor fetches the next one meanwhile).
          .$if(exclude.length > 0, (qb) => qb.where(subject, 'not in', [...exclude]))
          .groupBy(subject)
          .orderBy('since')
          .orderBy('first_id')
          .limit(subjects),
      )
      .selectFrom('webhook_inbox')
      .selectAll('webhook_inbox')
      .where('state', '=', 'pending')
      .where(isDue(now))
      .where(subject, 'in', (eb) => eb.selectFrom('oldest').select('oldest.subject'))
      .orderBy('id')
      .limit(maxRows)
      .execute();
  }

  /**
   * The pending events of `families` that name `referenceNumber`, due or waiting for a retry: what
   * a refresh of that record sent after this read covers (each was committed, so received, so its
   * change made, before the refresh). Served by the `(state, next_attempt_at)` index: only pending
   * rows are read, never the processed history.
   */
  async pendingFor(referenceNumber: string, families: readonly string[]): Promise<InboxRow[]> {
    if (families.length === 0) return [];
    return this.db
      .selectFrom('webhook_inbox')
      .selectAll()
      .where('state', '=', 'pending')
      .where('reference_number', '=', referenceNumber)
      .where('family', 'in', [...families])
      .orderBy('id')
      .execute();
  }

  /**
   * Marks events processed; an event that was parked before (and retried) leaves the quarantine.
   * A row armed again since it was taken (its `arm_count` moved: the same body arrived while its
   * refresh was in flight) stays pending for the next batch. Returns the ids marked done.
   */
  async markDone(rows: readonly TakenRow[], now: string): Promise<number[]> {
    if (rows.length === 0) return [];
    const byArmCount = new Map<number, number[]>();
    for (const row of rows) byArmCount.set(row.arm_count, [...(byArmCount.get(row.arm_count) ?? []), row.id]);
    const done: number[] = [];
    await this.atomically(async (trx) => {
      done.length = 0;
      // A coalesced batch can settle thousands of rows: bounded statements, one transaction.
      for (const [armCount, ids] of byArmCount) {
        for (const part of chunks(ids, IDS_PER_STATEMENT)) {
          const updated = await trx
            .updateTable('webhook_inbox')
            .set((eb) => ({ state: 'done', processed_at: now, last_error: null, attempts: eb('attempts', '+', 1) }))
            .where('id', 'in', part)
            .where('arm_count', '=', armCount)
            .returning('id')
            .execute();
          for (const row of updated) done.push(row.id);
        }
      }
      await new QuarantineStore(trx).resolveWebhookEvents(done);
    });
    return done;
  }

  /**
   * Records a failed attempt; after `maxAttempts` the row is parked as `failed` and listed in the
   * one quarantine (`freight-sync rejected list`, stream `webhook:<family>`); polling still covers it.
   */
  async markFailed(row: InboxRow, error: string, retryAt: string, maxAttempts: number): Promise<WebhookInboxState> {
    const attempts = row.attempts + 1;
    let state: WebhookInboxState = attempts >= maxAttempts ? 'failed' : 'pending';
    const lastError = error.slice(0, 2000);
    await this.atomically(async (trx) => {
      const updated = await trx
        .updateTable('webhook_inbox')
        .set({ attempts, state, last_error: lastError, next_attempt_at: retryAt })
        .where('id', '=', row.id)
        .where('arm_count', '=', row.arm_count)
        .executeTakeFirst();
      // Armed again meanwhile: a new event for it arrived, it stays pending and due.
      if (Number(updated.numUpdatedRows) === 0) state = 'pending';
      else if (state === 'failed') {
        await new QuarantineStore(trx).recordWebhookFailure({ id: row.id, key: row.event_key, stream: webhookStream(row.family), reason: lastError, body: row.body, attempts });
      }
    });
    return state;
  }

  /** Makes events pending and due now with fresh attempts (`freight-sync rejected retry`). */
  async rearm(ids: readonly number[], now: string): Promise<void> {
    if (ids.length === 0) return;
    await fencedWrite(this.db, this.fence, (executor) =>
      executor.updateTable('webhook_inbox').set({ state: 'pending', attempts: 0, next_attempt_at: now }).where('id', 'in', [...ids]).execute(),
    );
  }

  async byIds(ids: readonly number[]): Promise<InboxRow[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('webhook_inbox').selectAll().where('id', 'in', [...ids]).execute();
  }

  /** Forgets events for good (`freight-sync rejected discard`): a later identical delivery is stored anew. */
  async remove(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('webhook_inbox').where('id', 'in', [...ids]).execute();
  }

  /**
   * `work` in one transaction: the store's own, or the one it is bound to (StateStores.transaction).
   * Fenced: the lease check ends the store's own transaction, or follows `work` in the bound one.
   */
  private async atomically(work: (trx: Kysely<StateTables>) => Promise<void>): Promise<void> {
    const fence = this.fence;
    if (this.db.isTransaction) await fencedWrite(this.db, fence, work);
    else
      await this.db.transaction().execute(async (trx) => {
        await work(trx);
        if (fence) await assertLeaseHeld(trx, fence);
      });
  }

  /** The newest event time the inbox knows (log rows: when it happened; deliveries: when received). */
  async lastEventTime(): Promise<string | null> {
    const row = await this.db
      .selectFrom('webhook_inbox')
      .select(sql<string | null>`max(coalesce(occurred_at, received_at))`.as('last'))
      .executeTakeFirst();
    return row?.last ?? null;
  }

  async countByState(): Promise<Record<WebhookInboxState, number>> {
    const rows = await this.db.selectFrom('webhook_inbox').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    const out: Record<WebhookInboxState, number> = { pending: 0, done: 0, failed: 0 };
    for (const row of rows) out[row.state] = Number(row.n);
    return out;
  }

  /** Events received at or after `since` (ISO) per family and source (delivery or event-log catch-up). */
  async receiptCounts(since: string): Promise<Array<{ family: string; source: string; count: number }>> {
    const rows = await this.db
      .selectFrom('webhook_inbox')
      .select(['family', 'source', (eb) => eb.fn.countAll<number>().as('n')])
      .where('received_at', '>=', since)
      .groupBy(['family', 'source'])
      .execute();
    return rows.map((r) => ({ family: r.family, source: r.source, count: Number(r.n) }));
  }

  /** Deletes processed rows received before `before`; failed rows stay for inspection. */
  async prune(before: string): Promise<number> {
    const result = await this.db.deleteFrom('webhook_inbox').where('state', '=', 'done').where('received_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** The quarantine's stream name for an event of a family (the migration moves old ones the same way). */
export function webhookStream(family: string): string {
  return `webhook:${family}`;
}

/** PostgreSQL aborted the transaction to break a deadlock (40P01): nothing of it was kept. */
function isDeadlock(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '40P01';
}

/**
 * A pending row is due when it has not failed since it was (re-)armed — `attempts` 0: a receipt is
 * due at once, whatever time it was stamped with — or when its retry time has come. Receipt times
 * are the receiving process's estimate of the server's clock, and a replica that has not called the
 * API for the account yet (a standby behind the load balancer, a replica just restarted) stamps
 * with its own clock: with `next_attempt_at <= now` alone, a delivery it stored for a server whose
 * clock runs behind waited for the skew (cluster chaos, seed 40017: 150 s, brokerage accounts).
 * Retry times are set by the processor from its own estimate, so they compare with `now`.
 */
const isDue =
  (now: string) =>
  (eb: ExpressionBuilder<StateTables, 'webhook_inbox'>) =>
    eb.or([eb('attempts', '=', 0), eb('next_attempt_at', '<=', now)]);

/** Runs `work` (one transaction) again when the database chose it as a deadlock's victim, up to 3 times. */
async function retryOnDeadlock<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isDeadlock(error) || attempt >= 3) throw error;
    }
  }
}

/** Rows per multi-row INSERT of `acceptMany` (12 parameters each: far below any dialect's limit). */
const ACCEPT_CHUNK = 200;

function pendingRow(entry: InboxEntry) {
  return {
    event_key: entry.key,
    event_type: entry.eventType,
    family: entry.family,
    reference_number: entry.referenceNumber,
    body: entry.body,
    source: entry.source,
    occurred_at: entry.occurredAt,
    received_at: entry.receivedAt,
    armed_at: armedAtOf(entry),
    state: 'pending' as const,
    next_attempt_at: entry.receivedAt,
    last_error: null,
    processed_at: null,
  };
}

async function acceptOne(trx: Kysely<StateTables>, entry: InboxEntry, dedupeWindowMs: number): Promise<AcceptOutcome> {
  const inserted = await trx
    .insertInto('webhook_inbox')
    .values(pendingRow(entry))
    .onConflict((oc) => oc.column('event_key').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return 'stored';
  return acceptExisting(trx, entry, dedupeWindowMs);
}

/** A key that is an event id (`event:<id>`): the same key is the same event. */
const isEventIdKey = (key: string): boolean => key.startsWith('event:');

/**
 * How far an event-log time (the server's own) may be ahead of a receipt time (the client's
 * estimate of the server's clock, a lower bound from one-second `Date` headers) for the same
 * instant: within this, a logged event counts as before the receipt.
 */
const RECEIPT_CLOCK_SLACK_MS = 2_000;

/**
 * An entry whose key is already in the inbox.
 *
 * An event id names one event: within the dedupe window a repeat is the sender retrying (or the
 * log echoing a delivery) and is dropped; much later it is processed again.
 *
 * A body digest (load events carry no event id) names a body, not an event: a later change that
 * looks the same (a hold set, cleared and set again; a status set back) has the key of the first,
 * and only a refresh that reads the load after it happened covers it.
 * - An event-log entry (the catch-up) says when it happened: it is covered if that is before the
 *   row was last armed (its refresh started after that); else a pending row is armed again
 *   (`arm_count` + 1, `armed_at`) and a processed one made pending again (`rearmed`).
 * - A delivery does not say when it happened. If the row was last armed by an event-log entry
 *   within the dedupe window, the delivery is taken for the late delivery of that logged event
 *   (the catch-up read it first — after an outage, most events): dropped, as before; a newer
 *   change with the same body is in the log too, and the next catch-up arms the row for it.
 *   Otherwise (the row was armed by a delivery) it may be a new change: a pending row is armed
 *   again — if its refresh is in flight and read the load before this change, settling it finds
 *   `arm_count` moved and leaves it pending, so the next batch refreshes again — and a processed
 *   one is made pending again (one more GET for a sender's retry of an event already processed).
 *   Before, the same body within the window was always dropped: at 100 events/s the latency
 *   bench kept such a change out of the sink for ~4 s, until the load's next change.
 */
async function acceptExisting(trx: Kysely<StateTables>, entry: InboxEntry, dedupeWindowMs: number): Promise<AcceptOutcome> {
  const existing = await trx.selectFrom('webhook_inbox').select(['state', 'received_at', 'occurred_at', 'armed_at']).where('event_key', '=', entry.key).executeTakeFirstOrThrow();
  if (isEventIdKey(entry.key)) {
    const age = Date.parse(entry.occurredAt ?? entry.receivedAt) - Date.parse(existing.occurred_at ?? existing.received_at);
    if (existing.state === 'pending' || age < dedupeWindowMs) return 'duplicate';
  } else {
    const armedAt = existing.armed_at ?? existing.received_at;
    if (entry.occurredAt !== null) {
      if (Date.parse(entry.occurredAt) <= Date.parse(armedAt) + RECEIPT_CLOCK_SLACK_MS) return 'duplicate';
    } else if (existing.occurred_at !== null && Date.parse(entry.receivedAt) - Date.parse(existing.occurred_at) < dedupeWindowMs) {
      return 'duplicate';
    }
    if (existing.state === 'pending') {
      const bumped = await trx
        .updateTable('webhook_inbox')
        .set((eb) => ({ arm_count: eb('arm_count', '+', 1), armed_at: later(armedAt, armedAtOf(entry)) }))
        .where('event_key', '=', entry.key)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      if (Number(bumped.numUpdatedRows) > 0) return 'duplicate';
      // Settled since it was read (a single delivery runs without a transaction): made pending again below.
    }
  }
  await trx
    .updateTable('webhook_inbox')
    .set((eb) => ({
      state: 'pending',
      attempts: 0,
      received_at: entry.receivedAt,
      occurred_at: entry.occurredAt,
      armed_at: armedAtOf(entry),
      next_attempt_at: entry.receivedAt,
      last_error: null,
      processed_at: null,
      arm_count: eb('arm_count', '+', 1),
    }))
    .where('event_key', '=', entry.key)
    .execute();
  return 'rearmed';
}

/** The later of two ISO times. */
const later = (a: string, b: string): string => (Date.parse(b) > Date.parse(a) ? b : a);

/**
 * When an entry arms its row: its receipt, or when it happened if that is later — an event read
 * from the log happened before it was read, whatever the two clocks say (a brokerage log read
 * answers the whole day, events after the read's `to` included), so the refresh this arms covers
 * it, and the next read of the same entry finds it covered instead of arming the row again.
 */
const armedAtOf = (entry: InboxEntry): string => (entry.occurredAt === null ? entry.receivedAt : later(entry.receivedAt, entry.occurredAt));
