import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/**
 * Row types of the state database. Timestamps are ISO 8601 UTC strings written by the code (not
 * by SQL functions), so they read the same in every dialect and sort as text.
 */
export interface StateTables {
  tokens: TokensTable;
  checkpoints: CheckpointsTable;
  runs: RunsTable;
  seen_records: SeenRecordsTable;
  invoice_index: InvoiceIndexTable;
  invoice_links: InvoiceLinksTable;
  invoice_feed_loads: InvoiceFeedLoadsTable;
  invoice_candidates: InvoiceCandidatesTable;
  quarantine: QuarantineTable;
  outbox: OutboxTable;
  outbox_units: OutboxUnitsTable;
  outbox_inbound: OutboxInboundTable;
  customer_directory: CustomerDirectoryTable;
  outbox_lease: OutboxLeaseTable;
  webhook_inbox: WebhookInboxTable;
  token_refresh_locks: TokenRefreshLocksTable;
  token_reauth: TokenReauthTable;
  document_files: DocumentFilesTable;
  daemon_owner: DaemonOwnerTable;
  notification_conditions: NotificationConditionsTable;
  account_leases: AccountLeasesTable;
  replicas: ReplicasTable;
}

/** A condition the notifier announced and has not seen clear yet (migration 0010; src/notify). */
export interface NotificationConditionsTable {
  /** `<kind>:<subject>`, e.g. `stream-failing:loads`, `dead-letter:42`. */
  key: string;
  kind: string;
  subject: string;
  /** The one-line text it was announced with (quoted again in the recovery message). */
  summary: string;
  opened_at: string;
}

/** A load document whose file is stored (migration 0008; src/sync/document-files). */
export interface DocumentFilesTable {
  /** `<reference_number>|<type>|<url>`: the `documentFiles` record key. */
  document_key: string;
  reference_number: string;
  type: string;
  /** The delivered record (JSON): re-delivered as is while the document stays, as the tombstone's data once it goes. */
  record: string;
  /**
   * Server time from which the document is known to be on its load: the updatedAt of the load
   * version that listed it, or the server time of the listing (webhook path). An older load version
   * without it does not prove it gone.
   */
  seen_at: string;
  stored_at: string;
}

/** Cross-process lock around one account's token refresh (migration 0007). */
export interface TokenRefreshLocksTable {
  account: string;
  holder: string;
  /** Epoch milliseconds by the database clock (src/state/db-clock.ts) after which another process may take the lock over. */
  expires_at_ms: number;
}

/** An account whose tokens are lost and which waits for new credentials (migration 0014). */
export interface TokenReauthTable {
  account: string;
  reason: string;
  /** ISO 8601. */
  since: string;
  /** Fingerprint of the rejected credentials (never the credentials). */
  credentials: string | null;
}

export type WebhookInboxState = 'pending' | 'done' | 'failed';

/** One accepted webhook event (src/webhooks/inbox.ts; migration 0004). */
export interface WebhookInboxTable {
  id: Generated<number>;
  /** `event:<id>` when the body carries an event id, else `body:<sha256 of the raw body>`. */
  event_key: string;
  event_type: string;
  /** `load`, `invoice`, `document`, `driver`, … (the part before `#`). */
  family: string;
  reference_number: string | null;
  /** The raw body as received (or as the event log says it was sent). */
  body: string;
  source: 'delivery' | 'log';
  /** When the change happened, when known (event log `createdAt`). */
  occurred_at: string | null;
  received_at: string;
  state: WebhookInboxState;
  attempts: Generated<number>;
  next_attempt_at: string;
  last_error: string | null;
  processed_at: string | null;
  /**
   * Times the row was armed again by a later event with the same key (migration 0016): the
   * processor settles a row only while this is what it took (see WebhookInboxStore.accept).
   */
  arm_count: Generated<number>;
  /** Receipt (server clock) of the latest event that armed the row (migration 0016); null: `received_at`. */
  armed_at: string | null;
}

export interface InvoiceIndexTable {
  /** The invoice's record key (see src/sync/strategies/invoice-key.ts). */
  invoice_id: string;
  status: string | null;
  billing_date: string | null;
  /** 1 once the invoice is FULL_PAID (or voided). */
  is_final: number;
  updated_at: string;
  /** `primary`, `subCustomer` or `combined` (migration 0006). */
  kind: Generated<string>;
  /** 1 once the invoice arrived voided (a tombstone was delivered). */
  is_deleted: Generated<number>;
}

/** Which invoices cover which loads (several per load: primary, sub-customer, combined, voided). */
export interface InvoiceLinksTable {
  load_reference_number: string;
  invoice_id: string;
}

/** Load updatedAt up to which the loads change feed has fetched the load's invoices. */
export interface InvoiceFeedLoadsTable {
  load_reference_number: string;
  updated_at: string;
  /** Signature of the load's billing fields when its invoices were last settled (null: unknown). */
  billing_signature: string | null;
}

export interface InvoiceCandidatesTable {
  load_reference_number: string;
  reason: string;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string;
}

export type QuarantineKind = 'api-schema' | 'sink' | 'webhook';

/** One record (or webhook event) that did not land, whatever refused it (migration 0005). */
export interface QuarantineTable {
  id: Generated<number>;
  kind: QuarantineKind;
  /** The stream; `webhook:<family>` for an event no stream could take. */
  stream: string;
  /** sink: the record key; api-schema: the key, else `<batch>#<index>`; webhook: the inbox event key. */
  item_key: string;
  /** The connector that refused the record (kind `sink`); '' otherwise. */
  sink: string;
  reason: string;
  /** The record as read (JSON), or the webhook body as received. */
  raw: string;
  /** Content hash of the quarantined version (kind `sink`). */
  content_hash: string | null;
  batch_id: string | null;
  webhook_event_id: number | null;
  attempts: Generated<number>;
  first_seen_at: string;
  last_seen_at: string;
  /** When the next automatic re-delivery is due (kind `sink`); null: never automatically. */
  next_attempt_at: string | null;
}

export interface TokensTable {
  /** Derived from baseUrl + variant + clientId (see accountKey in src/api/account-key.ts). */
  account: string;
  access_token: string | null;
  refresh_token: string | null;
  access_expires_at: string | null;
  updated_at: string;
}

export interface CheckpointsTable {
  stream: string;
  /** The stream's cursor as JSON; its shape is owned (and validated) by the stream definition. */
  cursor: string;
  updated_at: string;
}

export type RunStatus = 'running' | 'ok' | 'failed' | 'aborted';

export interface RunsTable {
  id: Generated<number>;
  stream: string;
  command: string;
  started_at: string;
  finished_at: string | null;
  status: RunStatus;
  records: number;
  pages: number;
  requests: number;
  /** Records the run quarantined (migration 0005). */
  rejected: Generated<number>;
  error: string | null;
  /** Where the checkpoint stood when the run finished (migration 0011); null for backfills and older runs. */
  checkpoint_at: string | null;
  /** Seconds between that checkpoint and the server clock at the end of the run. */
  lag_seconds: number | null;
}

export interface SeenRecordsTable {
  stream: string;
  key: string;
  content_hash: string;
  updated_at: string;
}

export type RunRow = Selectable<RunsTable>;
export type NewRunRow = Insertable<RunsTable>;

/** Outbound command states (docs/outbound.md). `done`, `dead` and `cancelled` are final. */
export type OutboxState = 'pending' | 'sending' | 'retry' | 'reconciling' | 'done' | 'dead' | 'cancelled';

export interface OutboxTable {
  id: Generated<number>;
  erp_key: string;
  /** `create`, `update`, `status`, `document`. */
  kind: string;
  /** 1 for the first command of (erp_key, kind); a later different content adds the next one. */
  revision: number;
  /** Commands of one load run in id order within their group (`erp:<key>` or `ref:<number>`). */
  load_group: string;
  /** The validated command as JSON (see src/outbound/commands). */
  payload: string;
  content_hash: string;
  state: OutboxState;
  attempts: Generated<number>;
  next_attempt_at: string;
  last_error: string | null;
  /** Server-clock time of the latest send: reconciliation only accepts loads created after it. */
  sent_at: string | null;
  result_reference_number: string | null;
  result_load_id: string | null;
  result_note: string | null;
  origin_source: string;
  origin_unit: string;
  origin_ref: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface OutboxUnitsTable {
  source: string;
  unit_id: string;
  location: string;
  requests: number;
  /** `open` until the results were written back, then `written`. */
  state: string;
  created_at: string;
  written_at: string | null;
}

export interface OutboxInboundTable {
  source: string;
  unit_id: string;
  ref: string;
  /** Order within the unit, for the write-back. */
  seq: number;
  /** The command this request is (or duplicates); null when it was rejected at intake. */
  outbox_id: number | null;
  /** Rejected at intake: the precise error. */
  error: string | null;
  /** E.g. "duplicate of outbox #12". */
  note: string | null;
}

export interface CustomerDirectoryTable {
  id: string;
  /** `customers` or `consignees`. */
  collection: string;
  company_id: string | null;
  company_name: string | null;
  is_deleted: number;
  updated_at: string;
}

/** The `run` process owning the state store (migration 0009; src/state/stores/daemon-owner-store.ts). */
export interface DaemonOwnerTable {
  /** Always `daemon`: one row at most. */
  name: string;
  /** `host:pid:random`, unique per process. */
  holder: string;
  host: string;
  pid: number;
  started_at: string;
  heartbeat_at: string;
}

export interface OutboxLeaseTable {
  name: string;
  /** `host:pid:random`, unique per process. */
  holder: string;
  host: string;
  pid: number;
  expires_at: string;
}

export type OutboxRow = Selectable<OutboxTable>;

/** A bigint column: PostgreSQL's driver returns it as a string, SQLite as a number; read it with Number(). */
type BigintColumn = ColumnType<number | string, number, number>;

/** Which replica runs an account's API work, and under which epoch (migration 0013; src/state/leases). */
export interface AccountLeasesTable {
  account: string;
  /** The replica id holding the lease; null once released. */
  holder: string | null;
  /** Grows by one on every claim that changes hands or follows an expiry: the fencing token. */
  epoch: ColumnType<number | string, number | undefined, number>;
  /** Database-clock epoch milliseconds after which the lease may be claimed by another replica. */
  expires_at_ms: ColumnType<number | string, number | undefined, number>;
  /** What the holder is (`run`, `sync`, `backfill`; migration 0015); null once released or when unknown. */
  holder_command: ColumnType<string | null, string | null | undefined, string | null>;
  /** A one-shot waiting for the lease: nobody else may claim it while the request lives, and a `run` holder hands it over. */
  requested_by: ColumnType<string | null, string | null | undefined, string | null>;
  requested_command: ColumnType<string | null, string | null | undefined, string | null>;
  /** Database-clock epoch milliseconds after which the request no longer counts (its requester re-asserts it while waiting). */
  request_expires_at_ms: ColumnType<number | string, number | undefined, number>;
}

/** A running replica (migration 0013): live ones share the accounts between them. */
export interface ReplicasTable {
  id: string;
  host: string;
  pid: number;
  /** Database-clock epoch milliseconds. */
  started_at_ms: BigintColumn;
  heartbeat_at_ms: BigintColumn;
}
