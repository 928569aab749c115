import type { FreightSyncConfig } from '../config/types.js';
import { RECONCILE_STREAM_NAMES } from '../config/types.js';
import { createStreamMapper } from '../mapping/stream-mapper.js';
import type { ReconcileReport } from '../reconcile/report.js';
import { runReconcile, type ReconcileStreamInput } from '../reconcile/run-reconcile.js';
import { UsageError } from '../util/errors.js';
import type { ConnectorSet } from '../plugins/create-connectors.js';
import type { NamedSink, StreamRunDeps } from '../sync/stream-runner.js';
import { backfillPlan, effectiveSafetyLagMs, type ResolvedStream } from './stream-settings.js';

/** The parts of the opened app a reconcile uses (AppContext has them; compose.ts wires `run`'s). */
export interface ReconcileAppParts {
  readonly config: FreightSyncConfig;
  readonly streams: readonly ResolvedStream[];
  readonly connectors: ConnectorSet | undefined;
  readonly deps: StreamRunDeps;
  sinksFor(stream: ResolvedStream): NamedSink[];
}

export interface ReconcileRequest {
  /** Only these streams (of those the app opened); default: every reconcilable one. */
  readonly streams?: readonly string[] | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly days: number;
  /** Absent: `reconcile.maxRequests`, else the default share of the rate limit. */
  readonly maxRequests?: number | undefined;
  readonly repair: boolean;
  readonly signal: AbortSignal;
}

/**
 * The default request budget: one minute's worth of the configured rate (`api.rateLimit
 * .requestsPerSecond` × 60), a small share of what the API allows an hour, so a reconcile never
 * starves the sync it runs beside.
 */
export function defaultMaxRequests(config: FreightSyncConfig): number {
  return Math.max(10, Math.ceil(config.api.rateLimit.requestsPerSecond * 60));
}

/** The streams a reconcile checks by default: those of `names` the config syncs. */
export function reconcilableStreams(config: FreightSyncConfig, names: readonly string[] = config.reconcile.streams): string[] {
  return names.filter((name) => config.sync.streams[name as keyof FreightSyncConfig['sync']['streams']]?.enabled);
}

/** Checks `--stream` values: only the streams reconcile supports. */
export function assertReconcileStreams(names: readonly string[]): void {
  for (const name of names) {
    if (!(RECONCILE_STREAM_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(`--stream ${name}: reconcile checks ${RECONCILE_STREAM_NAMES.join(', ')} (streams with a period and a lookup by key)`);
    }
  }
}

/**
 * Binds a reconcile to the opened app: the streams it opened (only reconcilable ones), each
 * sink's writer (for repairs, observed by the metrics like the sync's), reader and mapping.
 */
export function reconcileApp(app: ReconcileAppParts, request: ReconcileRequest): Promise<ReconcileReport> {
  const streams: ReconcileStreamInput[] = app.streams
    .filter((s) => (RECONCILE_STREAM_NAMES as readonly string[]).includes(s.definition.name) && (!request.streams || request.streams.includes(s.definition.name)))
    .map((stream) => {
      const writers = app.sinksFor(stream);
      return {
        definition: stream.definition,
        pageSize: stream.pageSize,
        options: stream.options,
        plan: (from: string, to: string) => backfillPlan(stream, from, to),
        // Under the lag's cover, polling reaches only this far: newer changes are not expected yet.
        safetyLagMs: effectiveSafetyLagMs(stream),
        sinks: writers.map((writer) => {
          const handle = app.connectors?.get(writer.name);
          const mapping = handle?.mappings.get(stream.definition.name);
          if (!handle || !mapping) throw new Error(`connector ${writer.name} has no mapping for stream ${stream.definition.name}`);
          return { name: writer.name, sink: writer.sink, reader: handle.instance.reader, mapper: createStreamMapper(mapping) };
        }),
      };
    });
  return runReconcile({
    deps: app.deps,
    streams,
    from: request.from,
    to: request.to,
    days: request.days,
    maxRequests: request.maxRequests ?? app.config.reconcile.maxRequests ?? defaultMaxRequests(app.config),
    repair: request.repair,
    signal: request.signal,
  });
}
