import type { Kysely } from 'kysely';
import type { OutboxRow, OutboxState, StateTables } from '../tables.js';
import { OPEN_STATES } from '../outbox-states.js';
import { fencedWrite, type Fence } from '../leases/fence.js';
import { StatementTexts } from './statement-texts.js';

export interface NewCommandRow {
  erpKey: string;
  kind: string;
  revision: number;
  loadGroup: string;
  payload: string;
  contentHash: string;
  origin: { source: string; unit: string; ref: string };
}

export interface CommandResult {
  referenceNumber: string | null;
  loadId: string | null;
  note?: string | null;
}

export interface OutboxListFilter {
  states?: readonly OutboxState[];
  limit?: number;
}

/**
 * Every read and write of the outbox tables. Each state change is a single UPDATE that also
 * stamps `updated_at`; callers pass a transaction when several must commit together.
 */
export class OutboxStore {
  constructor(
    readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
    /** Given: every state transition (`update` and the marks) commits only while this account lease holds. */
    private readonly fence?: Fence,
    /** Shared by every store of one database (see StatementTexts). */
    private readonly texts: StatementTexts = new StatementTexts(),
  ) {}

  on(executor: Kysely<StateTables>): OutboxStore {
    return new OutboxStore(executor, this.now, this.fence, this.texts);
  }

  private stamp(): string {
    return this.now().toISOString();
  }

  async insertCommand(row: NewCommandRow): Promise<number> {
    const at = this.stamp();
    const result = await this.db
      .insertInto('outbox')
      .values({
        erp_key: row.erpKey,
        kind: row.kind,
        revision: row.revision,
        load_group: row.loadGroup,
        payload: row.payload,
        content_hash: row.contentHash,
        state: 'pending',
        next_attempt_at: at,
        last_error: null,
        sent_at: null,
        result_reference_number: null,
        result_load_id: null,
        result_note: null,
        origin_source: row.origin.source,
        origin_unit: row.origin.unit,
        origin_ref: row.origin.ref,
        created_at: at,
        updated_at: at,
        finished_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(result.id);
  }

  /** The rows with these ids (in chunks: SQLite limits the number of bound parameters). */
  async byIds(ids: readonly number[]): Promise<OutboxRow[]> {
    const rows: OutboxRow[] = [];
    for (let i = 0; i < ids.length; i += 400) {
      rows.push(...(await this.db.selectFrom('outbox').selectAll().where('id', 'in', ids.slice(i, i + 400)).execute()));
    }
    return rows;
  }

  async get(id: number): Promise<OutboxRow | undefined> {
    return this.db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The newest revision of (erp_key, kind). */
  async latest(erpKey: string, kind: string): Promise<OutboxRow | undefined> {
    return this.db.selectFrom('outbox').selectAll().where('erp_key', '=', erpKey).where('kind', '=', kind).orderBy('revision', 'desc').limit(1).executeTakeFirst();
  }

  /** The newest command of a kind in a group (a customer's commands share `cust:<code>`). */
  async latestInGroup(loadGroup: string, kind: string): Promise<OutboxRow | undefined> {
    return this.db.selectFrom('outbox').selectAll().where('load_group', '=', loadGroup).where('kind', '=', kind).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /** The create that produced `referenceNumber`, if this daemon created that load. */
  async createByReference(referenceNumber: string): Promise<OutboxRow | undefined> {
    return this.db
      .selectFrom('outbox')
      .selectAll()
      .where('kind', '=', 'create')
      .where('result_reference_number', '=', referenceNumber)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * Commands that may run now: due, and the first open command of their load group (so commands
   * of one load run in id order). Two small aggregate queries over indexed columns, so the cost
   * does not grow with a large backlog.
   */
  async dueHeads(now: Date, limit: number): Promise<Array<{ id: number; load_group: string }>> {
    const due = await this.db
      .selectFrom('outbox')
      .select(['load_group', (eb) => eb.fn.min<number>('id').as('id')])
      .where('state', 'in', [...OPEN_STATES])
      .where('next_attempt_at', '<=', now.toISOString())
      .groupBy('load_group')
      .orderBy((eb) => eb.fn.min('id'))
      .limit(limit)
      .execute();
    if (due.length === 0) return [];
    const heads = new Map<string, number>();
    const groups = due.map((d) => d.load_group);
    for (let i = 0; i < groups.length; i += 400) {
      const rows = await this.db
        .selectFrom('outbox')
        .select(['load_group', (eb) => eb.fn.min<number>('id').as('head')])
        .where('state', 'in', [...OPEN_STATES])
        .where('load_group', 'in', groups.slice(i, i + 400))
        .groupBy('load_group')
        .execute();
      for (const row of rows) heads.set(row.load_group, Number(row.head));
    }
    return due.filter((d) => heads.get(d.load_group) === Number(d.id)).map((d) => ({ id: Number(d.id), load_group: d.load_group }));
  }

  /** When the next open command becomes due (ms since epoch), and how many are open. */
  async openSummary(): Promise<{ open: number; nextDueAt: number | null }> {
    const row = await this.db
      .selectFrom('outbox')
      .select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min<string>('next_attempt_at').as('next')])
      .where('state', 'in', [...OPEN_STATES])
      .executeTakeFirst();
    return { open: Number(row?.n ?? 0), nextDueAt: row?.next ? Date.parse(row.next) : null };
  }

  /** When the earliest group head becomes due (rows behind a waiting head do not count). */
  async nextHeadDueAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('outbox as o')
      .select((eb) => eb.fn.min<string>('o.next_attempt_at').as('next'))
      .where('o.state', 'in', [...OPEN_STATES])
      .where((eb) =>
        eb(
          'o.id',
          '=',
          eb
            .selectFrom('outbox as h')
            .select((h) => h.fn.min<number>('h.id').as('head'))
            .whereRef('h.load_group', '=', 'o.load_group')
            .where('h.state', 'in', [...OPEN_STATES]),
        ),
      )
      .executeTakeFirst();
    return row?.next ? Date.parse(row.next) : null;
  }

  /** Open commands in id order (the dispatcher picks the first of each load group). */
  async openCommands(limit: number): Promise<Array<Pick<OutboxRow, 'id' | 'load_group' | 'state' | 'next_attempt_at'>>> {
    return this.db
      .selectFrom('outbox')
      .select(['id', 'load_group', 'state', 'next_attempt_at'])
      .where('state', 'in', [...OPEN_STATES])
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async update(id: number, changes: Partial<Omit<OutboxRow, 'id'>>): Promise<void> {
    const at = this.stamp();
    await fencedWrite(this.db, this.fence, (executor) => executor.updateTable('outbox').set({ ...changes, updated_at: at }).where('id', '=', id).execute());
  }

  /** Persisted BEFORE the request leaves: a crash after this line is reconciled, not re-sent. */
  async markSending(id: number, attempts: number, sentAt: string): Promise<void> {
    await this.update(id, { state: 'sending', attempts, sent_at: sentAt });
  }

  async markDone(id: number, result: CommandResult): Promise<void> {
    const at = this.stamp();
    await this.update(id, {
      state: 'done',
      result_reference_number: result.referenceNumber,
      result_load_id: result.loadId,
      result_note: result.note ?? null,
      last_error: null,
      finished_at: at,
    });
  }

  async markWaiting(id: number, state: 'retry' | 'reconciling' | 'pending', error: string | null, nextAttemptAt: Date, attempts?: number): Promise<void> {
    await this.update(id, { state, last_error: error, next_attempt_at: nextAttemptAt.toISOString(), ...(attempts !== undefined ? { attempts } : {}) });
  }

  async markDead(id: number, error: string): Promise<void> {
    await this.update(id, { state: 'dead', last_error: error, finished_at: this.stamp() });
  }

  /** Rows a previous process left in `sending`: the request may or may not have reached the API. */
  async interrupted(): Promise<OutboxRow[]> {
    return this.db.selectFrom('outbox').selectAll().where('state', '=', 'sending').execute();
  }

  async list(filter: OutboxListFilter = {}): Promise<OutboxRow[]> {
    let query = this.db.selectFrom('outbox').selectAll();
    if (filter.states && filter.states.length > 0) query = query.where('state', 'in', [...filter.states]);
    return query.orderBy('id', 'desc').limit(filter.limit ?? 100).execute();
  }

  /** Every dead letter, oldest first: what the notifier announces (no limit, unlike `list`). */
  async deadLetters(): Promise<Array<Pick<OutboxRow, 'id' | 'kind' | 'erp_key' | 'last_error'>>> {
    return this.db.selectFrom('outbox').select(['id', 'kind', 'erp_key', 'last_error']).where('state', '=', 'dead').orderBy('id').execute();
  }

  async countsByState(): Promise<Record<string, number>> {
    const rows = await this.db.selectFrom('outbox').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Done commands on these loads, newest first per load (echo marking). */
  async doneByReferences(refs: readonly string[]): Promise<Array<Pick<OutboxRow, 'id' | 'erp_key' | 'kind' | 'result_reference_number' | 'finished_at'>>> {
    const out: Array<Pick<OutboxRow, 'id' | 'erp_key' | 'kind' | 'result_reference_number' | 'finished_at'>> = [];
    const unique = [...new Set(refs)];
    for (let i = 0; i < unique.length; i += 400) {
      const part = unique.slice(i, i + 400);
      // Asked for every page of loads (echo marks): run from a kept text (StatementTexts).
      const { rows } = await this.texts.execute(this.db, `outbox-done-refs:${part.length}`, ['done', ...part], () =>
        this.db
          .selectFrom('outbox')
          .select(['id', 'erp_key', 'kind', 'result_reference_number', 'finished_at'])
          .where('state', '=', 'done')
          .where('result_reference_number', 'in', part)
          .orderBy('id', 'desc'),
      );
      out.push(...rows);
    }
    return out;
  }

  /** Non-final commands of a load group after `id` (dependents of a create). */
  async laterInGroup(loadGroup: string, afterId: number): Promise<OutboxRow[]> {
    return this.db.selectFrom('outbox').selectAll().where('load_group', '=', loadGroup).where('id', '>', afterId).orderBy('id').execute();
  }
}
