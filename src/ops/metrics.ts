import { sql, type Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ApiClientEvents, ApiClientStats } from '../api/client-events.js';
import type { RecordSink } from '../contracts/index.js';
import type { CheckpointStore } from '../state/stores/checkpoint-store.js';
import type { QuarantineStore } from '../state/stores/quarantine-store.js';
import type { RunHistoryStore } from '../state/stores/run-history-store.js';
import type { StateTables } from '../state/tables.js';
import { cursorPosition } from '../sync/cursor-position.js';

/** What the reconcile metrics read from a reconcile report (src/reconcile/report.ts has the full shape). */
export interface ReconcileMetricsInput {
  readonly finishedAt: string;
  readonly coverage: readonly { readonly stream: string; readonly complete: boolean }[];
  readonly results: readonly {
    readonly stream: string;
    readonly sink: string;
    readonly differences: readonly { readonly kind: string }[];
    readonly unchecked: readonly unknown[];
  }[];
}

/** What the scrape-time collectors read; bound once the app is built. */
export interface MetricsState {
  db: Kysely<StateTables>;
  checkpoints: CheckpointStore;
  quarantine: Pick<QuarantineStore, 'counts'>;
  /** Run history: the last successful run of each stream (survives restarts, includes `sync` runs). */
  runs: Pick<RunHistoryStore, 'lastSuccesses'>;
  /** Polled streams whose checkpoint lag is reported. */
  streams: readonly string[];
  /** Server time (the client's clock), so lag is not skewed by the local clock. */
  now: () => Date;
  apiStats: ApiClientStats;
  /** The API account and whether the shared state marks it `reauth_required` (tokens lost). */
  reauth?: { account: string; required(): Promise<boolean> };
}

/**
 * Every Prometheus metric of the daemon, on a dedicated Registry (never the global one, so two
 * apps in one process — tests, the demo — do not share or double-register series). Counters are
 * fed by events (API client, sinks, webhook receiver); depths and lags are read at scrape time.
 */
export class OpsMetrics {
  readonly registry = new Registry();
  private state: MetricsState | undefined;
  private rateWaitReportedMs = 0;
  private leases: Array<{ account: string; read: () => { active: boolean; epoch: number | undefined } }> = [];

  readonly recordsWritten = new Counter({
    name: 'freight_sync_records_written_total',
    help: 'Records acknowledged by a sink, by stream, operation (upsert/delete) and sink',
    labelNames: ['stream', 'op', 'sink'] as const,
    registers: [this.registry],
  });
  readonly recordsRejected = new Counter({
    name: 'freight_sync_records_rejected_total',
    help: 'Records a sink refused in its acknowledgement (quarantined for re-delivery), by stream and sink',
    labelNames: ['stream', 'sink'] as const,
    registers: [this.registry],
  });
  readonly sinkWriteSeconds = new Histogram({
    name: 'freight_sync_sink_write_seconds',
    help: 'Time a sink took to write and acknowledge one batch',
    labelNames: ['stream', 'sink', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'freight_sync_api_requests_total',
    help: 'API responses by endpoint (method and route template) and HTTP status',
    labelNames: ['endpoint', 'status'] as const,
    registers: [this.registry],
  });
  readonly apiRequestSeconds = new Histogram({
    name: 'freight_sync_api_request_seconds',
    help: 'API response time by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly apiNetworkErrors = new Counter({
    name: 'freight_sync_api_network_errors_total',
    help: 'API calls without a usable HTTP answer (reset, refused, timeout)',
    labelNames: ['endpoint', 'code'] as const,
    registers: [this.registry],
  });
  readonly apiRateLimited = new Counter({
    name: 'freight_sync_api_rate_limited_total',
    help: 'HTTP 429 answers from the API',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });
  readonly apiRetries = new Counter({
    name: 'freight_sync_api_retries_total',
    help: 'API calls retried, by endpoint and reason',
    labelNames: ['endpoint', 'reason'] as const,
    registers: [this.registry],
  });
  readonly tokenRefreshes = new Counter({
    name: 'freight_sync_api_token_refreshes_after_401_total',
    help: 'Access tokens refreshed because the API answered 401',
    registers: [this.registry],
  });
  readonly notifications = new Counter({
    name: 'freight_sync_notifications_total',
    help: 'Notification messages by channel and outcome (sent, failed after its attempts, held by the rate limit for a summary)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly notificationEvaluations = new Counter({
    name: 'freight_sync_notification_evaluations_total',
    help: 'Evaluations of the notification conditions completed (they run every notifications.interval)',
    registers: [this.registry],
  });
  readonly webhooksAccepted = new Counter({
    name: 'freight_sync_webhooks_accepted_total',
    help: 'Webhook deliveries answered 200, by outcome (stored, duplicate, rearmed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhooksRefused = new Counter({
    name: 'freight_sync_webhooks_refused_total',
    help: 'Webhook deliveries refused, by reason (signature_missing, signature_malformed, signature_mismatch, too_large, bad_payload, method, unavailable)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly webhookEventsProcessed = new Counter({
    name: 'freight_sync_webhook_events_processed_total',
    help: 'Inbox events processed, by family and outcome (done, retry, failed)',
    labelNames: ['family', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookCatchUpEvents = new Counter({
    name: 'freight_sync_webhook_catch_up_events_total',
    help: 'Events read back from the webhook event log, by outcome (stored, duplicate, rearmed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookDelaySeconds = new Histogram({
    name: 'freight_sync_webhook_processing_delay_seconds',
    help: 'From receiving an event to its refreshed records being acknowledged by the sinks',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly runs = new Counter({
    name: 'freight_sync_runs_total',
    help: 'Stream runs finished by this process, by stream and outcome (ok, failed, stopped)',
    labelNames: ['stream', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly reconcileDifferences = new Gauge({
    name: 'freight_sync_reconcile_differences',
    help: 'Differences the last reconcile found between a sink and the API, by stream, sink and kind (missing, stale, extra, unchecked)',
    labelNames: ['stream', 'sink', 'kind'] as const,
    registers: [this.registry],
  });
  readonly reconcileComplete = new Gauge({
    name: 'freight_sync_reconcile_complete',
    help: '1 when the last reconcile checked the whole period of a stream, 0 when its request budget (or a sink without read-back) left part unchecked',
    labelNames: ['stream'] as const,
    registers: [this.registry],
  });
  readonly reconcileLastRun = new Gauge({
    name: 'freight_sync_reconcile_last_run_timestamp_seconds',
    help: 'When the last reconcile finished (Unix time)',
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean; build?: { version: string; node: string } } = {}) {
    const self = this;
    const build = new Gauge({
      name: 'freight_sync_build_info',
      help: 'Always 1; labels carry the freight-sync version and the Node.js version running it',
      labelNames: ['version', 'node'] as const,
      registers: [this.registry],
    });
    build.set({ version: options.build?.version ?? 'unknown', node: options.build?.node ?? process.versions.node }, 1);
    new Gauge({
      name: 'freight_sync_last_success_timestamp_seconds',
      help: 'When each stream last finished a run without error (Unix time, from the run history: survives restarts and counts sync runs; backfills excluded)',
      labelNames: ['stream'] as const,
      registers: [this.registry],
      async collect() {
        if (!self.state) return;
        this.reset();
        for (const { stream, finishedAt } of await self.state.runs.lastSuccesses()) {
          const at = Date.parse(finishedAt);
          if (!Number.isNaN(at)) this.set({ stream }, at / 1000);
        }
      },
    });
    new Gauge({
      name: 'freight_sync_lease_held',
      help: "Whether this replica holds the account's lease and runs its work (1), or stands by (0)",
      labelNames: ['account'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const lease of self.leases) this.set({ account: lease.account }, lease.read().active ? 1 : 0);
      },
    });
    new Gauge({
      name: 'freight_sync_lease_epoch',
      help: "The epoch of the account's lease this replica holds (absent in standby); it grows with every change of holder",
      labelNames: ['account'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const lease of self.leases) {
          const { epoch } = lease.read();
          if (epoch !== undefined) this.set({ account: lease.account }, epoch);
        }
      },
    });
    new Gauge({
      name: 'freight_sync_reauth_required',
      help: 'Whether the API account is marked reauth_required in the state (1: its tokens are lost and its API work is paused until new credentials are given; 0: not marked)',
      labelNames: ['account'] as const,
      registers: [this.registry],
      async collect() {
        const reauth = self.state?.reauth;
        if (!reauth) return;
        this.reset();
        this.set({ account: reauth.account }, (await reauth.required()) ? 1 : 0);
      },
    });
    new Counter({
      name: 'freight_sync_api_rate_limit_wait_seconds_total',
      help: 'Time requests waited for the client-side rate budget',
      registers: [this.registry],
      collect() {
        const stats = self.state?.apiStats;
        if (!stats) return;
        const delta = stats.rateWaitMs - self.rateWaitReportedMs;
        if (delta > 0) {
          this.inc(delta / 1000);
          self.rateWaitReportedMs = stats.rateWaitMs;
        }
      },
    });
    new Gauge({
      name: 'freight_sync_checkpoint_lag_seconds',
      help: 'How far each polled stream\'s committed position is behind the server clock',
      labelNames: ['stream'] as const,
      registers: [this.registry],
      async collect() {
        const state = self.state;
        if (!state) return;
        this.reset();
        const entries = await state.checkpoints.list();
        const now = state.now().getTime();
        for (const stream of state.streams) {
          const entry = entries.find((e) => e.stream === stream);
          const position = entry ? cursorPosition(entry.cursor) : null;
          const at = position ? Date.parse(position) : Number.NaN;
          if (!Number.isNaN(at)) this.set({ stream }, Math.max(0, (now - at) / 1000));
        }
      },
    });
    new Gauge({
      name: 'freight_sync_outbox_depth',
      help: 'Outbound commands in the outbox, by state (absent until the outbox exists)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        if (!self.state) return;
        this.reset();
        for (const [state, count] of await countByState(self.state.db, 'outbox')) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'freight_sync_webhook_inbox_events',
      help: 'Webhook inbox events by state (pending, done, failed)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        if (!self.state) return;
        this.reset();
        for (const [state, count] of await countByState(self.state.db, 'webhook_inbox')) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'freight_sync_quarantined_records',
      help: 'Records (and webhook events) in the quarantine, by stream and kind (api-schema, sink, webhook); see freight-sync rejected list',
      labelNames: ['stream', 'kind'] as const,
      registers: [this.registry],
      async collect() {
        if (!self.state) return;
        this.reset();
        for (const { stream, kind, count } of await self.state.quarantine.counts()) this.set({ stream, kind }, count);
      },
    });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'freight_sync_' });
  }

  /** The account lease of `run` (held or standby, and its epoch), read at scrape time. */
  observeLease(account: string, read: () => { active: boolean; epoch: number | undefined }): void {
    this.leases.push({ account, read });
  }

  bind(state: MetricsState): void {
    this.state = state;
    this.rateWaitReportedMs = 0;
  }

  /** Feeds API metrics; none of these handlers may throw (client-events.ts). */
  apiClientEvents(): ApiClientEvents {
    const name = (e: { method: string; route: string }) => `${e.method} ${e.route}`;
    return {
      onResponse: ({ endpoint, status, durationMs }) => {
        this.apiRequests.inc({ endpoint: name(endpoint), status: String(status) });
        this.apiRequestSeconds.observe({ endpoint: name(endpoint) }, durationMs / 1000);
      },
      onNetworkError: ({ endpoint, code }) => this.apiNetworkErrors.inc({ endpoint: name(endpoint), code: code ?? 'unknown' }),
      onRetry: ({ endpoint, reason }) => this.apiRetries.inc({ endpoint: name(endpoint), reason: retryReasonLabel(reason) }),
      onRateLimited: ({ endpoint }) => this.apiRateLimited.inc({ endpoint: name(endpoint) }),
      onTokenRefresh: () => this.tokenRefreshes.inc(),
    };
  }

  /**
   * A sink that reports write latency, records written and records refused; behaves exactly like
   * `sink` (its acknowledgement is passed on untouched; the engine validates it).
   */
  observeSink(stream: string, sinkName: string, sink: RecordSink): RecordSink {
    return {
      write: async (batch, signal) => {
        const end = this.sinkWriteSeconds.startTimer({ stream, sink: sinkName });
        let ack: Awaited<ReturnType<RecordSink['write']>>;
        try {
          ack = await sink.write(batch, signal);
        } catch (error) {
          end({ outcome: 'error' });
          throw error;
        }
        end({ outcome: 'ok' });
        const refused = new Set(Array.isArray(ack?.rejected) ? ack.rejected.map((r) => r?.key) : []);
        let upserts = 0;
        let deletes = 0;
        for (const record of batch.records) {
          if (refused.has(record.key)) continue;
          if (record.op === 'delete') deletes += 1;
          else upserts += 1;
        }
        if (upserts > 0) this.recordsWritten.inc({ stream, op: 'upsert', sink: sinkName }, upserts);
        if (deletes > 0) this.recordsWritten.inc({ stream, op: 'delete', sink: sinkName }, deletes);
        if (refused.size > 0) this.recordsRejected.inc({ stream, sink: sinkName }, refused.size);
        return ack;
      },
      ...(sink.flush ? { flush: (signal: AbortSignal) => sink.flush!(signal) } : {}),
    };
  }

  /** A stream run finished (StreamRunDeps.onRunFinished). */
  recordRun(summary: { stream: string; status: string }): void {
    this.runs.inc({ stream: summary.stream, outcome: summary.status });
  }

  /** The result of a reconcile, replacing the previous one's series. */
  recordReconcile(report: ReconcileMetricsInput): void {
    this.reconcileDifferences.reset();
    this.reconcileComplete.reset();
    for (const result of report.results) {
      const counts: Record<string, number> = { missing: 0, stale: 0, extra: 0, unchecked: result.unchecked.length };
      for (const difference of result.differences) counts[difference.kind] = (counts[difference.kind] ?? 0) + 1;
      for (const [kind, n] of Object.entries(counts)) this.reconcileDifferences.set({ stream: result.stream, sink: result.sink, kind }, n);
    }
    for (const c of report.coverage) this.reconcileComplete.set({ stream: c.stream }, c.complete ? 1 : 0);
    this.reconcileLastRun.set(Date.parse(report.finishedAt) / 1000);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** Retry reasons are free text (`HTTP 503`, `ECONNRESET`); keep label cardinality bounded. */
function retryReasonLabel(reason: string): string {
  const match = /\b(\d{3})\b/.exec(reason);
  if (match) return `http_${match[1]}`;
  const code = /\b(E[A-Z]+|timeout|truncated)\b/i.exec(reason);
  return code ? code[1]!.toLowerCase() : 'other';
}

/**
 * `SELECT state, count(*)` of a state table (both exist once the store is migrated, which opening
 * it does). A failing query yields no series rather than failing the whole scrape.
 */
async function countByState(db: Kysely<StateTables>, table: string): Promise<Array<[string, number]>> {
  try {
    const rows = await sql<{ state: string; n: number }>`select state, count(*) as n from ${sql.table(table)} group by state`.execute(db);
    return rows.rows.map((r) => [String(r.state), Number(r.n)]);
  } catch {
    return [];
  }
}
