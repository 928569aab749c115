/**
 * What the console shows and does, as the composition root provides it (src/app/console-data.ts
 * reads the same state the CLI reads). The ops layer renders these shapes and never reaches into
 * the app; the types are structural so the app's own status types fit them as they are.
 */

export interface ConsoleRun {
  id: number;
  stream: string;
  command: string;
  startedAt: string;
  finishedAt: string | null;
  status: string;
  records: number;
  rejected: number;
  pages: number;
  requests: number;
  error: string | null;
  lagSeconds: number | null;
}

export interface ConsoleStream {
  stream: string;
  enabled: boolean;
  checkpoint: string | null;
  inProgress: boolean;
  lagSeconds: number | null;
  /** What covers late writes (`lateWriteCover` resolved; null: the stream needs neither). Under `lag` the lag is `lookback` larger by design. */
  lateWriteCover: 'lag' | 'lookback' | null;
  lastRun: ConsoleRun | null;
  /** The next scheduled run (null: push-only stream, or the daemon does not schedule it). */
  nextRunAt: string | null;
  running: boolean;
  recordsKnown: number;
  rejected: number;
}

export interface ConsoleOverview {
  generatedAt: string;
  streams: ConsoleStream[];
  outboxCounts: Record<string, number>;
  rejected: number;
  failedWebhookEvents: number;
}

export interface ConsoleStreamDetail {
  generatedAt: string;
  stream: ConsoleStream;
  /** Runs of the last `days` days, oldest first (the charts). */
  history: ConsoleRun[];
  days: number;
  recentRuns: ConsoleRun[];
}

export interface ConsoleOutboxEntry {
  id: number;
  erpKey: string;
  kind: string;
  state: string;
  attempts: number;
  error: string | null;
  origin: string;
  updatedAt: string;
  referenceNumber: string | null;
}

export interface ConsoleOutbox {
  counts: Record<string, number>;
  deadLetters: ConsoleOutboxEntry[];
  /** The newest commands in any state, newest first. */
  recent: ConsoleOutboxEntry[];
}

/** A quarantined record or webhook event (`freight-sync rejected`'s entries are these and more). */
export interface ConsoleRejectedEntry {
  id: number;
  /** `api-schema`, `sink` or `webhook`. */
  kind: string;
  stream: string;
  key: string;
  /** The connector that refused it (kind `sink`). */
  sink: string | null;
  reason: string;
  attempts: number;
  firstSeenAt: string;
  lastSeenAt: string;
  /** When the next automatic re-delivery is due; null when there is none (api-schema, webhook). */
  nextAttemptAt: string | null;
}

export interface ConsoleWebhookReceipts {
  family: string;
  source: string;
  last24h: number;
  last7d: number;
}

export interface ConsoleWebhooks {
  enabled: boolean;
  byState: Record<string, number>;
  receipts: ConsoleWebhookReceipts[];
  lastEventAt: string | null;
  failed: ConsoleRejectedEntry[];
}

export type ConsoleActionKind = 'outbox-retry' | 'outbox-cancel' | 'rejected-retry' | 'rejected-discard';

export interface ConsoleActionResult {
  ok: boolean;
  message: string;
}

export interface ConsoleData {
  overview(): Promise<ConsoleOverview>;
  /** Undefined: no such stream in the config. */
  stream(name: string): Promise<ConsoleStreamDetail | undefined>;
  outbox(): Promise<ConsoleOutbox>;
  rejected(): Promise<ConsoleRejectedEntry[]>;
  webhooks(): Promise<ConsoleWebhooks>;
  runs(filter: { failedOnly: boolean }): Promise<ConsoleRun[]>;
  /** Carries out an action; a refusal (e.g. the command is done already) is a result, not a throw. */
  act(kind: ConsoleActionKind, id: number, signal: AbortSignal): Promise<ConsoleActionResult>;
}
