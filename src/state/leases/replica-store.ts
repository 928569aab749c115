import { sql, type Kysely } from 'kysely';
import { dbNowMsSql } from '../db-clock.js';
import type { StateTables } from '../tables.js';

export interface ReplicaIdentity {
  id: string;
  host: string;
  pid: number;
}

/**
 * The `replicas` table (migration 0013): each replica heartbeats its row by the database clock;
 * the live ones (recent heartbeat) divide the accounts between them (fair-share.ts).
 */
export class ReplicaStore {
  private readonly db: Kysely<StateTables>;

  /** `schema`: where the rows live when not in the connection's own schema (see LeaseStore). */
  constructor(db: Kysely<StateTables>, options: { schema?: string | undefined } = {}) {
    this.db = options.schema ? db.withSchema(options.schema) : db;
  }

  async heartbeat(me: ReplicaIdentity): Promise<void> {
    const now = dbNowMsSql(this.db);
    await this.db
      .insertInto('replicas')
      .values({ id: me.id, host: me.host, pid: me.pid, started_at_ms: now, heartbeat_at_ms: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at_ms: now }))
      .execute();
  }

  /** Replicas whose heartbeat is younger than `staleMs` (at least 1: the caller counts itself). */
  async liveCount(staleMs: number): Promise<number> {
    const row = await this.db
      .selectFrom('replicas')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('heartbeat_at_ms', '>', sql<number>`${dbNowMsSql(this.db)} - ${Math.trunc(staleMs)}`)
      .executeTakeFirst();
    return Math.max(1, Number(row?.n ?? 0));
  }

  /** On shutdown: the others take our share at once. */
  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('replicas').where('id', '=', id).execute();
  }

  /** Forgets replicas silent for longer than `staleMs` (housekeeping; they no longer count anyway). */
  async prune(staleMs: number): Promise<number> {
    const result = await this.db
      .deleteFrom('replicas')
      .where('heartbeat_at_ms', '<=', sql<number>`${dbNowMsSql(this.db)} - ${Math.trunc(staleMs)}`)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
