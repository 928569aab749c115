import type { ConsoleRejectedEntry } from '../ops/console/console-data.js';
import type { QuarantineRow } from '../state/stores/quarantine-store.js';
import type { QuarantineKind } from '../state/tables.js';
import { redeliver } from '../sync/redeliver.js';
import type { AppContext } from './app-context.js';
import { composeWebhookProcessor } from './compose-webhooks.js';

/**
 * One entry of the quarantine as `freight-sync rejected` shows it (the same vocabulary for all
 * kinds): what the console lists (`ConsoleRejectedEntry`: id, kind, stream, key, sink, reason,
 * attempts, first/last seen, next attempt), plus the batch and, in `show`, the record.
 */
export interface RejectedEntry extends ConsoleRejectedEntry {
  kind: QuarantineKind;
  batchId: string | null;
  /** The record as read (JSON), or the webhook body. Only in `show`. */
  raw?: unknown;
}

export type RetryResult = 'delivered' | 'rejected' | 'failed' | 'no-sink' | 'not-retryable';

export interface RetryReport {
  id: number;
  kind: QuarantineKind;
  stream: string;
  key: string;
  sink: string | null;
  result: RetryResult;
  /** Why it did not land (null when delivered). */
  reason: string | null;
}

export function toEntry(row: QuarantineRow, withRaw = false): RejectedEntry {
  const entry: RejectedEntry = {
    id: row.id,
    kind: row.kind,
    stream: row.stream,
    key: row.item_key,
    sink: row.sink === '' ? null : row.sink,
    reason: row.reason,
    attempts: row.attempts,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
    nextAttemptAt: row.next_attempt_at,
    batchId: row.batch_id,
  };
  if (withRaw) entry.raw = parseRaw(row.raw);
  return entry;
}

function parseRaw(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Webhook events retried by processing the inbox at most this many batches. */
const MAX_WEBHOOK_PASSES = 20;

/**
 * Re-delivers quarantined entries now, whatever their next attempt time: a sink refusal goes to
 * the sink that refused it (through the same re-delivery as a run, so nothing reaches a sink that
 * already has it); a parked webhook event is re-armed and the inbox processed at once. A record
 * the API schema refused cannot be sent again from here — the API must send a valid version.
 * The app must be opened with the connectors of the entries' streams.
 */
export async function retryRejected(app: AppContext, rows: readonly QuarantineRow[], signal: AbortSignal): Promise<RetryReport[]> {
  const reports: RetryReport[] = [];
  const report = (row: QuarantineRow, result: RetryResult, reason: string | null) =>
    reports.push({ id: row.id, kind: row.kind, stream: row.stream, key: row.item_key, sink: row.sink === '' ? null : row.sink, result, reason });

  for (const row of rows.filter((r) => r.kind === 'api-schema')) {
    report(row, 'not-retryable', 'the API sent this record in a shape its schema refuses; a valid version from the API replaces it (discard it once handled)');
  }

  const sinkRows = rows.filter((r) => r.kind === 'sink');
  for (const stream of new Set(sinkRows.map((r) => r.stream))) {
    const entries = sinkRows.filter((r) => r.stream === stream);
    const resolved = app.streams.find((s) => s.definition.name === stream);
    if (!resolved) {
      for (const row of entries) report(row, 'no-sink', `stream ${stream} is not enabled in the config`);
      continue;
    }
    const outcome = await redeliver(app.deps, { definition: resolved.definition, sinks: app.sinksFor(resolved), signal, logger: app.logger, runId: 'rejected-retry' }, entries);
    const byId = new Map(outcome.entries.map((e) => [e.id, e]));
    for (const row of entries) {
      const done = byId.get(row.id);
      // Absent: a newer version settled the entry in the meantime.
      report(row, done?.result ?? 'delivered', done?.reason ?? null);
    }
  }

  const webhookRows = rows.filter((r) => r.kind === 'webhook' && r.webhook_event_id !== null);
  if (webhookRows.length > 0) {
    const ids = webhookRows.map((r) => r.webhook_event_id!);
    await app.stores.webhookInbox.rearm(ids, new Date().toISOString());
    const processor = composeWebhookProcessor(app);
    for (let pass = 0; pass < MAX_WEBHOOK_PASSES; pass += 1) {
      const pending = (await app.stores.webhookInbox.byIds(ids)).filter((r) => r.state === 'pending' && r.attempts === 0);
      if (pending.length === 0 || (await processor.processDue(signal)) === 0) break;
    }
    const states = new Map((await app.stores.webhookInbox.byIds(ids)).map((r) => [r.id, r]));
    for (const row of webhookRows) {
      const event = states.get(row.webhook_event_id!);
      if (!event) report(row, 'failed', 'the event is no longer in the webhook inbox');
      else if (event.state === 'done') report(row, 'delivered', null);
      else report(row, 'failed', `${event.last_error ?? 'not processed yet'} (the event stays in the inbox and is retried by freight-sync run)`);
    }
  }
  for (const row of rows.filter((r) => r.kind === 'webhook' && r.webhook_event_id === null)) report(row, 'failed', 'the event is no longer in the webhook inbox');
  return reports.sort((a, b) => a.id - b.id);
}

/**
 * Forgets entries for good. A sink refusal is not re-delivered any more (the sink keeps lacking
 * that version; a newer version from the API is delivered as usual); a parked webhook event
 * leaves the inbox too.
 */
export async function discardRejected(app: AppContext, rows: readonly QuarantineRow[]): Promise<number> {
  const events = rows.filter((r) => r.kind === 'webhook' && r.webhook_event_id !== null).map((r) => r.webhook_event_id!);
  return app.stores.transaction(async (tx) => {
    await tx.webhookInbox.remove(events);
    return tx.quarantine.remove(rows.map((r) => r.id));
  });
}
