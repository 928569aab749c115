import type { Kysely, Selectable } from 'kysely';
import type { NotificationConditionsTable, StateTables } from '../tables.js';

export type OpenCondition = Selectable<NotificationConditionsTable>;

/** The conditions the notifier announced and has not seen clear (see migration 0010). */
export class NotificationStore {
  constructor(private readonly db: Kysely<StateTables>) {}

  async open(): Promise<OpenCondition[]> {
    return this.db.selectFrom('notification_conditions').selectAll().orderBy('key').execute();
  }

  /** Records newly announced conditions and forgets recovered ones, in one transaction. */
  async apply(change: { opened: readonly OpenCondition[]; closed: readonly string[] }): Promise<void> {
    if (change.opened.length === 0 && change.closed.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const row of change.opened) {
        await trx.insertInto('notification_conditions').values(row).onConflict((c) => c.column('key').doNothing()).execute();
      }
      for (const key of change.closed) await trx.deleteFrom('notification_conditions').where('key', '=', key).execute();
    });
  }
}
