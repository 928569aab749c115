import type { Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { OPEN_STATES } from '../outbox-states.js';

export interface InboundEntry {
  ref: string;
  seq: number;
  outboxId: number | null;
  error: string | null;
  note: string | null;
}

/** Units handed over by sources, and the fate of each of their requests (write-back). */
export class UnitStore {
  constructor(readonly db: Kysely<StateTables>) {}

  on(executor: Kysely<StateTables>): UnitStore {
    return new UnitStore(executor);
  }

  async find(source: string, unitId: string): Promise<{ state: string; location: string } | undefined> {
    return this.db.selectFrom('outbox_units').select(['state', 'location']).where('source', '=', source).where('unit_id', '=', unitId).executeTakeFirst();
  }

  async insert(source: string, unitId: string, location: string, requests: number): Promise<void> {
    await this.db
      .insertInto('outbox_units')
      .values({ source, unit_id: unitId, location, requests, state: 'open', created_at: new Date().toISOString(), written_at: null })
      .execute();
  }

  async addEntry(source: string, unitId: string, entry: InboundEntry): Promise<void> {
    await this.db
      .insertInto('outbox_inbound')
      .values({ source, unit_id: unitId, ref: entry.ref, seq: entry.seq, outbox_id: entry.outboxId, error: entry.error, note: entry.note })
      // A request ref repeated inside one unit (a source bug) keeps its first outcome.
      .onConflict((oc) => oc.columns(['source', 'unit_id', 'ref']).doNothing())
      .execute();
  }

  async entries(source: string, unitId: string): Promise<InboundEntry[]> {
    const rows = await this.db
      .selectFrom('outbox_inbound')
      .select(['ref', 'seq', 'outbox_id', 'error', 'note'])
      .where('source', '=', source)
      .where('unit_id', '=', unitId)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ ref: r.ref, seq: r.seq, outboxId: r.outbox_id, error: r.error, note: r.note }));
  }

  async openUnits(): Promise<Array<{ source: string; unitId: string }>> {
    const rows = await this.db.selectFrom('outbox_units').select(['source', 'unit_id']).where('state', '=', 'open').orderBy('created_at').execute();
    return rows.map((r) => ({ source: r.source, unitId: r.unit_id }));
  }

  /** Open units that hold a request pointing at one of these commands. */
  async openUnitsOf(outboxIds: readonly number[]): Promise<Array<{ source: string; unitId: string }>> {
    if (outboxIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('outbox_inbound')
      .innerJoin('outbox_units', (join) => join.onRef('outbox_units.source', '=', 'outbox_inbound.source').onRef('outbox_units.unit_id', '=', 'outbox_inbound.unit_id'))
      .select(['outbox_units.source', 'outbox_units.unit_id'])
      .where('outbox_inbound.outbox_id', 'in', [...outboxIds])
      .where('outbox_units.state', '=', 'open')
      .distinct()
      .execute();
    return rows.map((r) => ({ source: r.source, unitId: r.unit_id }));
  }

  /** Requests of the unit whose command is not final yet (cheap check before building results). */
  async countOpenRequests(source: string, unitId: string): Promise<number> {
    const row = await this.db
      .selectFrom('outbox_inbound')
      .innerJoin('outbox', 'outbox.id', 'outbox_inbound.outbox_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('outbox_inbound.source', '=', source)
      .where('outbox_inbound.unit_id', '=', unitId)
      .where('outbox.state', 'in', [...OPEN_STATES])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async markWritten(source: string, unitId: string): Promise<void> {
    await this.db
      .updateTable('outbox_units')
      .set({ state: 'written', written_at: new Date().toISOString() })
      .where('source', '=', source)
      .where('unit_id', '=', unitId)
      .execute();
  }

  async countOpen(): Promise<number> {
    const row = await this.db.selectFrom('outbox_units').select((eb) => eb.fn.countAll<number>().as('n')).where('state', '=', 'open').executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}
