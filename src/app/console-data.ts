import type { ConsoleActionKind, ConsoleActionResult, ConsoleData, ConsoleOutboxEntry, ConsoleRun, ConsoleStream } from '../ops/console/console-data.js';
import { cancelCommand, retryCommand, type AdminOutcome } from '../outbound/outbox-admin.js';
import { OutboxCommandError } from '../outbound/errors.js';
import type { RunRecord } from '../state/stores/run-history-store.js';
import type { OutboxRow } from '../state/tables.js';
import type { AppContext } from './app-context.js';
import { discardRejected, retryRejected, toEntry } from './rejected-admin.js';
import { collectStatus, type StreamStatus } from './stream-status.js';

/** What the daemon's scheduler knows and the state does not: when each stream runs next. */
export interface ScheduleView {
  nextRunAt(stream: string): Date | null;
  isRunning(stream: string): boolean;
}

/** Days of run history the stream page charts. */
const CHART_DAYS = 7;
const DAY_MS = 86_400_000;

function toRun(run: RunRecord): ConsoleRun {
  return { ...run };
}

function toOutboxEntry(row: OutboxRow): ConsoleOutboxEntry {
  return {
    id: row.id,
    erpKey: row.erp_key,
    kind: row.kind,
    state: row.state,
    attempts: row.attempts,
    error: row.last_error,
    origin: `${row.origin_source}:${row.origin_unit}#${row.origin_ref}`,
    updatedAt: row.updated_at,
    referenceNumber: row.result_reference_number,
  };
}

function outboxMessage(verb: string, outcome: AdminOutcome): string {
  const requeued = outcome.requeued.length > 0 ? `; requeued dependents ${outcome.requeued.map((n) => `#${n}`).join(', ')}` : '';
  return `outbox #${outcome.row.id} (${outcome.row.kind} ${outcome.row.erp_key}) ${verb}: now ${outcome.row.state}${requeued}. ${outcome.notes.join('; ')}`;
}

/**
 * The console's data from the same state the CLI reads: `status` (collectStatus), the run
 * history, the outbox (`freight-sync outbox`), the quarantine (`freight-sync rejected`) and the
 * webhook inbox; its actions are the CLI's own (outbox-admin, rejected-admin).
 */
export function consoleData(app: AppContext, schedule?: ScheduleView): ConsoleData {
  const { stores } = app;
  const now = () => app.client.clock.now();

  const withSchedule = async (status: StreamStatus): Promise<ConsoleStream> => {
    const last = status.lastRun ? (await stores.runs.last(status.stream)) ?? null : null;
    return {
      ...status,
      lastRun: last ? toRun(last) : null,
      nextRunAt: schedule?.nextRunAt(status.stream)?.toISOString() ?? null,
      running: schedule?.isRunning(status.stream) ?? false,
    };
  };

  const quarantineAction = async (kind: 'rejected-retry' | 'rejected-discard', id: number, signal: AbortSignal): Promise<ConsoleActionResult> => {
    const row = await stores.quarantine.get(id);
    if (!row) return { ok: false, message: `rejected #${id} does not exist (retried or discarded already?)` };
    if (kind === 'rejected-discard') {
      await discardRejected(app, [row]);
      return { ok: true, message: `rejected #${id} (${row.stream} ${row.item_key}) discarded` };
    }
    const [report] = await retryRejected(app, [row], signal);
    if (!report) return { ok: false, message: `rejected #${id}: nothing was retried` };
    return report.result === 'delivered'
      ? { ok: true, message: `rejected #${id} (${row.stream} ${row.item_key}) delivered` }
      : { ok: false, message: `rejected #${id} (${row.stream} ${row.item_key}): ${report.result}${report.reason ? ` — ${report.reason}` : ''}` };
  };

  return {
    async overview() {
      const status = await collectStatus(app, now());
      return {
        generatedAt: status.generatedAt,
        streams: await Promise.all(status.streams.map(withSchedule)),
        outboxCounts: status.outbound.counts,
        rejected: status.streams.reduce((n, s) => n + s.rejected, 0),
        failedWebhookEvents: status.rejectedWebhookEvents,
      };
    },

    async stream(name) {
      const status = await collectStatus(app, now());
      const found = status.streams.find((s) => s.stream === name);
      if (!found) return undefined;
      const since = new Date(now().getTime() - CHART_DAYS * DAY_MS).toISOString();
      return {
        generatedAt: status.generatedAt,
        stream: await withSchedule(found),
        history: (await stores.runs.since(name, since)).map(toRun),
        days: CHART_DAYS,
        recentRuns: (await stores.runs.recent(30, { stream: name })).map(toRun),
      };
    },

    async outbox() {
      return {
        counts: await stores.outbox.countsByState(),
        deadLetters: (await stores.outbox.list({ states: ['dead'], limit: 200 })).map(toOutboxEntry),
        recent: (await stores.outbox.list({ limit: 100 })).map(toOutboxEntry),
      };
    },

    async rejected() {
      return (await stores.quarantine.list({ limit: 500 })).map((row) => toEntry(row));
    },

    async webhooks() {
      const at = now().getTime();
      const day = await stores.webhookInbox.receiptCounts(new Date(at - DAY_MS).toISOString());
      const week = await stores.webhookInbox.receiptCounts(new Date(at - CHART_DAYS * DAY_MS).toISOString());
      return {
        enabled: app.config.webhooks.enabled,
        byState: await stores.webhookInbox.countByState(),
        receipts: week.map((w) => ({
          family: w.family,
          source: w.source,
          last7d: w.count,
          last24h: day.find((d) => d.family === w.family && d.source === w.source)?.count ?? 0,
        })),
        lastEventAt: await stores.webhookInbox.lastEventTime(),
        failed: (await stores.quarantine.list({ kinds: ['webhook'], limit: 500 })).map((row) => toEntry(row)),
      };
    },

    async runs({ failedOnly }) {
      return (await stores.runs.recent(200, { failedOnly })).map(toRun);
    },

    async act(kind: ConsoleActionKind, id: number, signal: AbortSignal): Promise<ConsoleActionResult> {
      try {
        if (kind === 'outbox-retry') return { ok: true, message: outboxMessage('retried', await retryCommand(stores.outbox, id)) };
        if (kind === 'outbox-cancel') return { ok: true, message: outboxMessage('cancelled', await cancelCommand(stores.outbox, id)) };
        return await quarantineAction(kind, id, signal);
      } catch (error) {
        // A refusal the CLI would print (done already, being sent): shown on the page, not a 500.
        if (error instanceof OutboxCommandError) return { ok: false, message: error.message };
        throw error;
      }
    },
  };
}
