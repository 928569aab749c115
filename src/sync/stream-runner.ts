import type { ApiClient } from '../api/api-client.js';
import type { RejectedItem } from '../api/paging.js';
import type { StateStores } from '../state/stores/index.js';
import { isAbortError } from '../util/abort.js';
import { describeError } from '../util/errors.js';
import { isExpectedFailure } from '../util/log-errors.js';
import type { Logger } from '../util/logger.js';
import { contentHash } from './content-hash.js';
import { cursorCompletedAt, cursorInProgress, cursorPosition } from './cursor-position.js';
import { ConsumerDemand, readAhead } from './read-ahead.js';
import type { FileStore, SyncRecord } from '../contracts/index.js';
import type { SinkRefusal } from '../state/stores/quarantine-store.js';
import type { SyncSideStore } from '../state/stores/sync-side-store.js';
import { buildBatch, flushSinks, writeToSink, type NamedSink } from './sink-ack.js';
import { withStreamDelivery } from './delivery-lock.js';
import { redeliverDue } from './redeliver.js';
import type { DeliveryHooks } from './delivery-hooks.js';
import type { AnyStreamDefinition, RawRecord, RunPlan } from './stream-definition.js';

export type { NamedSink } from './sink-ack.js';

/** What the engine needs: its stores, the API client, a logger, and the hooks other parts add. */
export interface StreamRunDeps {
  stores: StateStores;
  client: ApiClient;
  logger: Logger;
  hooks?: DeliveryHooks;
  /** The file store of each stream that stores files (documentFiles), wired by the app. */
  files?: ReadonlyMap<string, FileStore>;
  /** Told of every finished run (metrics); must not throw. */
  onRunFinished?(summary: StreamRunSummary): void;
}

export interface StreamRunRequest {
  definition: AnyStreamDefinition;
  sinks: readonly NamedSink[];
  pageSize: number;
  options: Record<string, unknown>;
  plan: RunPlan;
  command: string;
  /** Aborts in-flight requests and writes (second SIGTERM, or a hard deadline). */
  signal: AbortSignal;
  /** Stops after the current batch is committed (first SIGTERM). */
  stopSignal?: AbortSignal;
  onProgress?: (progress: StreamProgress) => void;
}

export interface StreamProgress {
  stream: string;
  records: number;
  pages: number;
  /** Where the stream stands: the lower bound or window being read. */
  position: string | null;
}

export type StreamRunStatus = 'ok' | 'failed' | 'stopped';

export interface StreamRunSummary {
  stream: string;
  status: StreamRunStatus;
  /** Records handed to the sinks (new or changed). */
  delivered: number;
  upserts: number;
  deletes: number;
  /** Records read again through overlap and dropped because their content was unchanged. */
  unchanged: number;
  /**
   * Records quarantined by this run: list elements that failed their schema or had no key, and
   * records a sink refused (also on re-delivery). Not counted in `delivered`.
   */
  rejected: number;
  pages: number;
  requests: number;
  durationMs: number;
  error: string | null;
}

export interface DeliverRequest {
  definition: AnyStreamDefinition;
  sinks: readonly NamedSink[];
  records: readonly RawRecord[];
  rejected?: readonly RejectedItem[];
  /** Position part of the batch id (the content digest is appended). */
  batchId: string;
  /** Run history id the rows are tagged with (`_run_id`); targeted deliveries default to their batch id. */
  runId?: string;
  signal: AbortSignal;
  /** The cursor to commit with the batch; absent for targeted deliveries (webhook refreshes). */
  checkpoint?: { key: string; cursor: unknown };
  afterCommit?: ReadonlyArray<(side: SyncSideStore) => Promise<void>>;
}

export interface DeliverOutcome {
  delivered: number;
  upserts: number;
  deletes: number;
  unchanged: number;
  rejected: number;
}

/**
 * Delivers raw records of one stream: builds `SyncRecord`s (a record without a key is
 * quarantined, not dropped silently), drops those whose content the sinks already have, hands
 * the rest to EVERY sink, and only after all of them acknowledged commits — in one transaction —
 * the content hashes, the cursor (when given), the quarantine and the side bookkeeping (design
 * §2.7). Used by the stream runner for polled pages and by the webhook processor for targeted
 * refreshes, so both paths deliver exactly alike.
 *
 * Several sinks on one stream, and a sink refusing a record (SinkAck): the content hash means
 * "every sink has this version", so a refused record's hash is NOT remembered. Instead the
 * quarantine gets one entry per refusing sink, holding that version; the sinks that accepted it
 * get no entry. While an entry holds a version, that same version read again (lookback, webhook)
 * is not handed to any sink — the accepting sinks have it, the refusing one gets it from the
 * re-delivery (`redeliverDue`, with backoff) — so nothing is written twice. A NEWER version goes
 * to every sink as usual and settles each sink's entry: removed where it landed, replaced where
 * it was refused again. The checkpoint moves on in any case: the quarantine holds the record.
 */
export async function deliverBatch(deps: StreamRunDeps, request: DeliverRequest): Promise<DeliverOutcome> {
  return withStreamDelivery(deps.stores, request.definition.name, () => deliverBatchNow(deps, request));
}

async function deliverBatchNow(deps: StreamRunDeps, request: DeliverRequest): Promise<DeliverOutcome> {
  const { definition } = request;
  const stream = definition.name;
  const syncedAt = new Date().toISOString();
  const schemaRejected = (request.rejected ?? []).map((item) => ({ ...item, key: keyOf(definition, item.raw) }));
  const records: SyncRecord[] = [];
  // E.g. loads this daemon created or changed carry `_freightSync` (wired in src/app/compose.ts).
  const raw = deps.hooks?.enrich ? await deps.hooks.enrich(stream, request.records) : request.records;
  raw.forEach((data, index) => {
    try {
      const op = definition.op(data);
      records.push({ stream, key: definition.key(data), op, updatedAt: definition.updatedAt(data), data, syncedAt });
    } catch (error) {
      schemaRejected.push({ index, raw: data, problem: describeError(error), key: null });
    }
  });
  const hashes = records.map((r) => ({ key: r.key, hash: contentHash(r.op, r.data) }));
  const changed = new Set(await deps.stores.seen.filterChanged(stream, hashes));
  // One record per key: the last one read is the newest.
  const latest = new Map<string, { record: SyncRecord; hash: string }>();
  records.forEach((record, i) => {
    if (changed.has(record.key)) latest.set(record.key, { record, hash: hashes[i]!.hash });
  });
  const held = await deps.stores.quarantine.entriesFor(stream, [...latest.keys()]);
  // A version the quarantine holds for a refusing sink is re-delivered from there (see above).
  const toWrite = [...latest.values()].filter((t) => !held.get(t.record.key)?.some((e) => e.kind === 'sink' && e.hash === t.hash));

  const refusals: SinkRefusal[] = [];
  const refusedBy = new Map<string, Set<string>>();
  if (toWrite.length > 0) {
    const batch = buildBatch(stream, request.batchId, toWrite, request.runId ?? request.batchId);
    const acks = await Promise.all(request.sinks.map((s) => writeToSink(s, batch, request.signal)));
    const byKey = new Map(toWrite.map((t) => [t.record.key, t]));
    acks.forEach((refused, i) => {
      const sink = request.sinks[i]!.name;
      refusedBy.set(sink, new Set(refused.keys()));
      for (const [key, reason] of refused) {
        const item = byKey.get(key)!;
        refusals.push({ key, sink, reason, raw: item.record.data, hash: item.hash, batchId: batch.batchId });
      }
    });
  }
  const refusedKeys = new Set(refusals.map((r) => r.key));
  const accepted = toWrite.filter((t) => !refusedKeys.has(t.record.key));
  // Only keys with entries can settle any (most batches have none: no statements).
  const settling = toWrite.filter((t) => held.has(t.record.key)).map((t) => t.record.key);

  await deps.stores.transaction(async (tx) => {
    await tx.seen.remember(stream, accepted.map((t) => ({ key: t.record.key, hash: t.hash })));
    if (request.checkpoint) await tx.checkpoints.set(request.checkpoint.key, request.checkpoint.cursor, definition.cursorSchema);
    for (const { name } of request.sinks) {
      const landed = settling.filter((key) => !refusedBy.get(name)?.has(key));
      if (landed.length > 0) await tx.quarantine.resolveForSink(stream, name, landed);
    }
    const everywhere = settling.filter((key) => !refusedKeys.has(key));
    if (everywhere.length > 0) await tx.quarantine.resolveSchemaRejections(stream, everywhere);
    await tx.quarantine.recordSinkRefusals(stream, refusals);
    if (schemaRejected.length > 0) await tx.quarantine.recordSchemaRejections(stream, request.batchId, schemaRejected);
    for (const task of request.afterCommit ?? []) await task(tx.side);
    await deps.hooks?.inCommit?.(stream, request.records, tx);
  });
  if (schemaRejected.length > 0) {
    deps.logger.error(
      { stream, batch: request.batchId, rejected: schemaRejected.slice(0, 5).map((r) => ({ index: r.index, problem: r.problem })) },
      `${schemaRejected.length} record(s) failed the API schema and were quarantined (see freight-sync rejected list)`,
    );
  }
  if (refusals.length > 0) {
    deps.logger.error(
      { stream, batch: request.batchId, refused: refusals.slice(0, 5).map((r) => ({ key: r.key, sink: r.sink, reason: r.reason })) },
      `${refusedKeys.size} record(s) refused by a sink and quarantined for re-delivery (see freight-sync rejected list)`,
    );
  }
  const deletes = accepted.filter((t) => t.record.op === 'delete').length;
  return {
    delivered: accepted.length,
    upserts: accepted.length - deletes,
    deletes,
    unchanged: records.length - toWrite.length,
    rejected: schemaRejected.length + refusedKeys.size,
  };
}

/** The key of a list element that failed its schema, when it has one (a later good version then settles its entry). */
function keyOf(definition: AnyStreamDefinition, raw: unknown): string | null {
  if (raw === null || typeof raw !== 'object') return null;
  try {
    return definition.key(raw as RawRecord) || null;
  } catch {
    return null;
  }
}

/** The cursor key of a backfill: separate from the stream's own, so a backfill never moves it. */
export function backfillCursorKey(stream: string, from: string, to: string): string {
  return `backfill:${stream}:${from}:${to}`;
}

/**
 * Runs one stream: read chunks from its strategy, drop records whose content the sinks already
 * have, hand the rest to EVERY sink, and only after all of them acknowledged commit — in one
 * transaction — the content hashes, the cursor and the side bookkeeping (design §2.7). A crash
 * anywhere repeats at most the last batch, which the idempotent sinks absorb.
 */
export async function runStream(deps: StreamRunDeps, request: StreamRunRequest): Promise<StreamRunSummary> {
  const { definition, plan } = request;
  const stream = definition.name;
  const logger = deps.logger.child({ stream });
  const cursorKey = plan.mode === 'backfill' ? backfillCursorKey(stream, plan.from ?? '', plan.to ?? '') : stream;
  const started = Date.now();
  const requestsBefore = deps.client.stats.requests;
  const summary: StreamRunSummary = {
    stream,
    status: 'ok',
    delivered: 0,
    upserts: 0,
    deletes: 0,
    unchanged: 0,
    rejected: 0,
    pages: 0,
    requests: 0,
    durationMs: 0,
    error: null,
  };
  const runId = await deps.stores.runs.start(stream, request.command);
  try {
    const cursor = await deps.stores.checkpoints.get(cursorKey, definition.cursorSchema);
    const env = {
      client: deps.client,
      variant: deps.client.variant,
      pageSize: request.pageSize,
      options: request.options,
      logger,
      side: deps.stores.side,
      files: deps.files?.get(stream),
    };
    const readFrom = async (from: unknown): Promise<void> => {
      // One demand per read-ahead: it is stopped when its consumer stops.
      const demand = new ConsumerDemand();
      const chunks = definition.read({ ...env, demand }, from, plan, request.signal);
      for await (const chunk of definition.dependsOnCommits ? chunks : readAhead(chunks, demand)) {
        const outcome = await deliverBatch(deps, {
          definition,
          sinks: request.sinks,
          records: chunk.records,
          rejected: chunk.rejected,
          batchId: chunk.batchId,
          runId: String(runId),
          signal: request.signal,
          checkpoint: { key: cursorKey, cursor: chunk.cursor },
          afterCommit: chunk.afterCommit,
        });
        // Delivered and committed: the records go now, not when this chunk's last reference does
        // (a suspended generator keeps stale references to what it handled; see ConsumerDemand).
        if (chunk.recordsReleasable) chunk.records.length = 0;
        summary.delivered += outcome.delivered;
        summary.upserts += outcome.upserts;
        summary.deletes += outcome.deletes;
        summary.unchanged += outcome.unchanged;
        summary.rejected += outcome.rejected;
        summary.pages += chunk.pages;
        request.onProgress?.({ stream, records: summary.delivered, pages: summary.pages, position: cursorPosition(chunk.cursor) });
        if (request.stopSignal?.aborted) {
          summary.status = 'stopped';
          return;
        }
      }
    };
    // Records a sink refused earlier and whose next attempt is due go first, to that sink only.
    const redelivered = await redeliverDue(deps, { definition, sinks: request.sinks, signal: request.signal, logger, runId: String(runId) });
    summary.delivered += redelivered.delivered;
    summary.upserts += redelivered.delivered - redelivered.deletes;
    summary.deletes += redelivered.deletes;
    summary.rejected += redelivered.rejected;
    await readFrom(cursor);
    // A run that started inside a range a killed run left behind has only finished that range:
    // it reads on to the current server time in the same run instead of lagging one run behind.
    if (cursorInProgress(cursor) && summary.status === 'ok' && plan.mode !== 'backfill') {
      await readFrom(await deps.stores.checkpoints.get(cursorKey, definition.cursorSchema));
    }
    if (plan.mode === 'backfill' && summary.status === 'ok') await seedIncrementalCheckpoint(deps, definition, cursorKey, plan);
    if (summary.rejected > 0 && summary.status === 'ok') {
      summary.status = 'failed';
      // One rule for every kind of rejection: the run fails (exit 1, alerting) although its
      // checkpoint moved on — the quarantine holds the records and re-delivers sink refusals.
      summary.error = `${summary.rejected} record(s) rejected (see freight-sync rejected list)`;
    }
  } catch (error) {
    if (isAbortError(error) || request.signal.aborted) {
      summary.status = 'stopped';
      summary.error = 'aborted';
    } else {
      summary.status = 'failed';
      summary.error = describeError(error);
      // An expected failure (API down, credentials refused, a sink unreachable) is named once, by
      // the report line below; a defect also gets its stack.
      if (!isExpectedFailure(error)) logger.error({ err: error }, `stream ${stream} failed unexpectedly`);
    }
  } finally {
    // What the run acknowledged becomes visible now (a file drop publishes its batch), also after
    // a failure or a stop; not after a hard abort: the sink publishes it at its next start.
    if (!request.signal.aborted) {
      const failures = await flushSinks(request.sinks, request.signal);
      for (const failure of failures) logger.error({ stream }, failure);
      if (failures.length > 0 && summary.status === 'ok') {
        summary.status = 'failed';
        summary.error = failures.join('; ');
      }
    }
    summary.requests = deps.client.stats.requests - requestsBefore;
    summary.durationMs = Date.now() - started;
    const position = plan.mode === 'backfill' ? null : await checkpointPosition(deps, definition, cursorKey);
    await deps.stores.runs.finish(runId, {
      ...position,
      status: summary.status === 'ok' ? 'ok' : summary.status === 'stopped' ? 'aborted' : 'failed',
      records: summary.delivered,
      rejected: summary.rejected,
      pages: summary.pages,
      requests: summary.requests,
      error: summary.error,
    });
    logRunReport(logger, request.command, summary);
    deps.onRunFinished?.(summary);
  }
  return summary;
}

/**
 * The one line per run an operator (or a log query) reads: stable `msg` "run finished" and the
 * same fields every time. Info when the run went through or was stopped, error when it failed.
 */
function logRunReport(logger: Logger, command: string, summary: StreamRunSummary): void {
  const report = {
    command,
    outcome: summary.status,
    durationMs: summary.durationMs,
    delivered: summary.delivered,
    unchanged: summary.unchanged,
    rejected: summary.rejected,
    requests: summary.requests,
    pages: summary.pages,
    error: summary.error,
  };
  if (summary.status === 'failed') logger.error(report, RUN_REPORT_MESSAGE);
  else logger.info(report, RUN_REPORT_MESSAGE);
}

/** The `msg` of the per-run report line (documented in docs/operations.md; log queries match on it). */
export const RUN_REPORT_MESSAGE = 'run finished';

/**
 * Where the stream's checkpoint stands after a run and how far behind the server clock: kept with
 * the run so the console can chart lag over days. Never fails the run (a read error gives nulls).
 */
async function checkpointPosition(deps: StreamRunDeps, definition: AnyStreamDefinition, cursorKey: string): Promise<{ checkpointAt: string | null; lagSeconds: number | null }> {
  try {
    const at = cursorPosition(await deps.stores.checkpoints.get(cursorKey, definition.cursorSchema));
    const atMs = at ? Date.parse(at) : NaN;
    if (Number.isNaN(atMs)) return { checkpointAt: at, lagSeconds: null };
    return { checkpointAt: at, lagSeconds: Math.max(0, Math.round((deps.client.clock.now().getTime() - atMs) / 1000)) };
  } catch {
    return { checkpointAt: null, lagSeconds: null };
  }
}

/** Where a cursor stands (ISO time): the window being read, else the high-water mark. Also used for checkpoint-lag metrics. */
export /**
 * A finished backfill that started at or before the stream's `initialFrom` covered everything the
 * first incremental run would read: when the stream has no checkpoint yet, it starts where the
 * backfill ended instead of reading the whole history a second time.
 */
async function seedIncrementalCheckpoint(deps: StreamRunDeps, definition: AnyStreamDefinition, cursorKey: string, plan: RunPlan): Promise<void> {
  const finished = await deps.stores.checkpoints.get(cursorKey, definition.cursorSchema);
  const reached = cursorCompletedAt(finished);
  if (!reached || !plan.from || Date.parse(plan.from) > Date.parse(plan.initialFrom)) return;
  if ((await deps.stores.checkpoints.list()).some((entry) => entry.stream === definition.name)) return;
  const seed = definition.resetCursor(deps.client.variant, reached);
  if (seed !== null) await deps.stores.checkpoints.set(definition.name, seed, definition.cursorSchema);
}
