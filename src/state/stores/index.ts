import { sql, type Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { CheckpointStore } from './checkpoint-store.js';
import { CustomerDirectoryStore } from './customer-directory-store.js';
import { DaemonOwnerStore } from './daemon-owner-store.js';
import { NotificationStore } from './notification-store.js';
import { OutboxStore } from './outbox-store.js';
import { QuarantineStore } from './quarantine-store.js';
import { RunHistoryStore } from './run-history-store.js';
import { SeenRecordStore } from './seen-record-store.js';
import { SyncSideStore } from './sync-side-store.js';
import { SqlTokenStore } from './token-store.js';
import { UnitStore } from './unit-store.js';
import { WebhookInboxStore } from './webhook-inbox-store.js';
import { assertLeaseHeld, type Fence } from '../leases/fence.js';
import { StatementTexts } from './statement-texts.js';

export { CheckpointStore, type CheckpointEntry, type StateExecutor } from './checkpoint-store.js';
export { CustomerDirectoryStore } from './customer-directory-store.js';
export { DaemonOwnerStore, StateOwnedError, ownerAlive, type DaemonOwner } from './daemon-owner-store.js';
export { NotificationStore, type OpenCondition } from './notification-store.js';
export { OutboxStore } from './outbox-store.js';
export { QuarantineStore } from './quarantine-store.js';
export { RunHistoryStore } from './run-history-store.js';
export { SeenRecordStore } from './seen-record-store.js';
export { SyncSideStore } from './sync-side-store.js';
export { SqlTokenStore } from './token-store.js';
export { UnitStore } from './unit-store.js';
export { WebhookInboxStore } from './webhook-inbox-store.js';

/**
 * Every store of the state database, bound to one executor (the database, or a transaction).
 * The composition root creates the set once; the parts receive the stores they need. Work that
 * must commit atomically across stores runs in `transaction`, which hands over the same set bound
 * to the transaction.
 */
export interface StateStores {
  readonly checkpoints: CheckpointStore;
  readonly seen: SeenRecordStore;
  readonly runs: RunHistoryStore;
  readonly side: SyncSideStore;
  readonly tokens: SqlTokenStore;
  readonly outbox: OutboxStore;
  readonly units: UnitStore;
  readonly directory: CustomerDirectoryStore;
  readonly webhookInbox: WebhookInboxStore;
  /** Records that did not land (API schema, sink refusals, failed webhook events): the one quarantine. */
  readonly quarantine: QuarantineStore;
  /** Which `run` process owns this state store (`reset` refuses while it lives). */
  readonly daemonOwner: DaemonOwnerStore;
  /** Conditions the notifier announced and has not seen clear (src/notify). */
  readonly notifications: NotificationStore;
  /** Runs `work` in one transaction; the stores it receives write inside it. */
  transaction<T>(work: (stores: StateStores) => Promise<T>): Promise<T>;
  /** A trivial query: the readiness probe of the state database. */
  ping(): Promise<void>;
}

export interface CreateStoresOptions {
  /**
   * The account lease the stores write under (src/state/leases). Given, these writes commit only
   * while the lease holds, else they throw LeaseLostError and roll back: `transaction` (the check
   * is its last statement), checkpoint writes, outbox transitions and webhook inbox transitions.
   * Everything else is written as without a fence — on purpose for tokens (a rotated refresh token
   * must be saved even by a replica that just lost its lease) and for received webhooks.
   */
  fence?: Fence;
  /** Statement texts of this database (see StatementTexts); a transaction's stores share the database's. */
  texts?: StatementTexts;
}

export function createStores(db: Kysely<StateTables>, options: CreateStoresOptions = {}): StateStores {
  const { fence } = options;
  const texts = options.texts ?? new StatementTexts();
  return {
    checkpoints: new CheckpointStore(db, undefined, fence),
    seen: new SeenRecordStore(db, undefined, texts),
    runs: new RunHistoryStore(db),
    side: new SyncSideStore(db, undefined, texts),
    tokens: new SqlTokenStore(db),
    outbox: new OutboxStore(db, undefined, fence, texts),
    units: new UnitStore(db),
    directory: new CustomerDirectoryStore(db),
    webhookInbox: new WebhookInboxStore(db, fence),
    quarantine: new QuarantineStore(db, undefined, texts),
    daemonOwner: new DaemonOwnerStore(db),
    notifications: new NotificationStore(db),
    // Fenced: the stores handed to `work` write plainly inside the transaction, and the one lease
    // check ends it (its lock lasts until COMMIT), so the whole transaction commits or none of it.
    transaction: (work) =>
      db.transaction().execute(async (trx) => {
        const out = await work(createStores(trx, { texts }));
        if (fence) await assertLeaseHeld(trx, fence);
        return out;
      }),
    ping: async () => void (await sql`select 1`.execute(db)),
  };
}
