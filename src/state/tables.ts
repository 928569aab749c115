import type { Generated, Insertable, Selectable } from 'kysely';

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
  invoice_loads: InvoiceLoadsTable;
  invoice_candidates: InvoiceCandidatesTable;
  rejected_records: RejectedRecordsTable;
}

export interface InvoiceIndexTable {
  invoice_id: string;
  status: string | null;
  billing_date: string | null;
  /** 1 once the invoice is FULL_PAID: it is no longer re-polled. */
  is_final: number;
  updated_at: string;
}

export interface InvoiceLoadsTable {
  load_reference_number: string;
  invoice_id: string;
}

export interface InvoiceCandidatesTable {
  load_reference_number: string;
  reason: string;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string;
}

export interface RejectedRecordsTable {
  id: Generated<number>;
  stream: string;
  batch_id: string;
  item_index: number;
  problem: string;
  raw: string;
  created_at: string;
}

export interface TokensTable {
  /** Derived from baseUrl + variant + clientId (see tokenAccountKey). */
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
  error: string | null;
}

export interface SeenRecordsTable {
  stream: string;
  key: string;
  content_hash: string;
  updated_at: string;
}

export type RunRow = Selectable<RunsTable>;
export type NewRunRow = Insertable<RunsTable>;
