import pLimit from 'p-limit';
import type { ApiClient } from '../api/api-client.js';
import type { OpsMetrics } from '../ops/metrics.js';
import { isAbortError } from '../util/abort.js';
import { backoffDelay } from '../util/backoff.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { deliverBatch, type NamedSink, type StreamRunDeps } from '../sync/stream-runner.js';
import { flushSinks } from '../sync/sink-ack.js';
import type { SyncSideStore } from '../state/stores/sync-side-store.js';
import type { AnyStreamDefinition, RawRecord, StreamName } from '../sync/stream-definition.js';
import type { InboxRow, WebhookInboxStore } from '../state/stores/webhook-inbox-store.js';
import { LOAD_FAMILIES, refreshDocumentFiles, refreshDocuments, refreshInvoice, refreshLoad, type Refreshed } from './refresh.js';
import type { RejectedItem } from '../api/paging.js';
import { documentFilesContext } from '../sync/streams/document-files.js';
import type { DocumentFilesOptions } from '../sync/document-files/options.js';
import { invoiceLoadReferences, parseEvent, type ParsedEvent } from './webhook-event.js';
import { Wakeup } from './wakeup.js';
import { runSupervisedLoop } from '../util/supervised-loop.js';

const IDLE_POLL_MS = 1_000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;
const CLAIM_AFTER_MS = 250;

export interface ProcessorOptions {
  batchSize: number;
  maxAttempts: number;
  /** Loop supervision (the config's `supervision` section): failures in a row before `run` gives up. */
  maxConsecutiveFailures?: number;
  /** Pause after a failing pass, doubling up to `max` (default 5 s doubling to 60 s). */
  failurePauseMs?: { base: number; max: number };
  /** A load refresh sent this long (ms) after its batch was taken first claims the load's newer pending events (default 250). */
  claimAfterMs?: number;
  /**
   * How long (ms) the processor sleeps with nothing to do before it looks at the inbox anyway
   * (default 1,000): for events it is not told of — stored by another replica, or due later (a
   * retry). Events this process stores wake it at once.
   */
  idlePollMs?: number;
}

/** A configured stream the processor can deliver to (loads, invoices, loadDocuments, events). */
export interface WebhookStreamTarget {
  definition: AnyStreamDefinition;
  sinks: readonly NamedSink[];
  options: Record<string, unknown>;
}

export interface WebhookProcessorDeps {
  client: ApiClient;
  /** The engine's delivery dependencies: webhook refreshes take exactly the polled path. */
  runDeps: StreamRunDeps;
  /** Streams that are configured; an event for another stream is skipped. */
  streams: ReadonlyMap<StreamName, WebhookStreamTarget>;
  metrics: Pick<OpsMetrics, 'webhookEventsProcessed' | 'webhookDelaySeconds'>;
  /** Refreshes in flight at once (the client's `maxInFlight`). */
  maxInFlight: number;
  logger: Logger;
}

interface Item {
  row: InboxRow;
  event: ParsedEvent;
}

/** A batch whose records are fetched and not yet delivered. */
interface Prepared {
  rows: InboxRow[];
  items: Item[];
  errors: Map<number, string>;
  streams: Map<StreamName, StreamWork>;
  /** What the batch covers (see `subjectOf`): kept out of the next batch until this one settled. */
  subjects: Set<string>;
  startedAt: number;
  fetchedAt: number;
}

/** The subject of a row as `WebhookInboxStore.due` groups them: the load it names, or the row alone. */
function subjectOf(row: InboxRow): string {
  return row.reference_number ?? `#${row.id}`;
}

/**
 * The batch in delivery while the processor fetches the next one. Its subjects are `busy`: the
 * next batch leaves them out (their events settle with this batch, or wait for the one after), so
 * no load is fetched by two batches at once and deliveries keep the order of the fetches.
 */
class DeliveryPipeline {
  readonly busy = new Set<string>();
  private current: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;

  get active(): boolean {
    return this.current !== undefined;
  }

  start(subjects: ReadonlySet<string>, work: () => Promise<void>): void {
    for (const subject of subjects) this.busy.add(subject);
    // The error is kept for `drain`: nobody awaits the promise until then.
    this.current = work()
      .catch((error: unknown) => void (this.failure = { error }))
      .finally(() => {
        for (const subject of subjects) this.busy.delete(subject);
      });
  }

  /** Settles when the batch in delivery did (never rejects; `drain` reports its failure). */
  get settled(): Promise<void> {
    return this.current ?? Promise.resolve();
  }

  /** Waits for the batch in delivery; rethrows its failure. */
  async drain(): Promise<void> {
    const current = this.current;
    if (current) await current;
    if (this.current === current) this.current = undefined;
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure.error;
  }
}

/** Records for one stream from one batch, and which inbox rows they came from. */
interface StreamWork {
  stream: WebhookStreamTarget;
  records: RawRecord[];
  rejected: RejectedItem[];
  afterCommit: Array<(side: SyncSideStore) => Promise<void>>;
  rows: Set<number>;
}

/**
 * Works off the inbox after the 200 went out: takes the due events of the `batchSize` loads that
 * have waited longest — every pending event of each, across the whole inbox (see
 * `WebhookInboxStore.due`) — fetches each referenced record once (GET /loads/<ref>,
 * /invoices/<ref>, /load-document/), and hands the results to the sinks of the corresponding
 * stream with `deliverBatch` — the same path polled records take, so content-hash dedup,
 * tombstones and invoice bookkeeping behave alike. A burst of thousands of events for hundreds of
 * loads therefore costs one GET per load, and all of a load's events are marked done together,
 * only after its state was delivered (a crash before leaves them pending: processed again, never
 * lost). Refreshes go through the shared rate budget at most `maxInFlight` at a time, so polling
 * requests queue behind a handful of them, never behind the burst. One sink write per stream per
 * batch keeps latency low under bursts. A failed event is retried with
 * backoff, then parked as `failed`; polling remains the safety net for anything parked.
 */
export class WebhookProcessor {
  readonly wakeup = new Wakeup();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly logger: Logger;
  /** The reauth_required reason in force, logged once when the pause starts and once when it ends. */
  private pausedFor: string | undefined;

  constructor(
    private readonly deps: WebhookProcessorDeps,
    private readonly inbox: WebhookInboxStore,
    private readonly options: ProcessorOptions,
  ) {
    this.limit = pLimit(Math.max(1, deps.maxInFlight));
    this.logger = deps.logger;
  }

  /**
   * Runs until `signal` aborts; the current batch is finished first (its writes use `writeSignal`).
   * A failing pass (a locked database, a bug in one event) is logged and retried after a pause;
   * passes failing many times in a row end the loop with `LoopDiedError`, which stops the daemon.
   */
  async run(signal: AbortSignal, writeSignal: AbortSignal): Promise<void> {
    const configured = {
      maxConsecutiveFailures: this.options.maxConsecutiveFailures,
      baseDelayMs: this.options.failurePauseMs?.base ?? IDLE_POLL_MS * 5,
      maxDelayMs: this.options.failurePauseMs?.max,
    };
    // The batch being delivered while the next one is fetched (the sink's writes and fsyncs overlap the GETs).
    const pipeline = new DeliveryPipeline();
    // A wake-up was taken while a batch was in delivery: events of its loads may have been left out.
    let lookAfterDelivery = false;
    const idlePollMs = this.options.idlePollMs ?? IDLE_POLL_MS;
    try {
      await runSupervisedLoop({ name: 'webhook processor', logger: this.logger, signal, ...configured }, async () => {
        try {
          // A reauth_required account: the events wait in the inbox (no attempt used, none parked).
          if (await this.paused()) {
            await pipeline.drain();
            return void (await this.wakeup.wait(idlePollMs, signal));
          }
          const prepared = await this.prepare(writeSignal, pipeline.busy);
          if (!prepared) {
            // An event committed while a batch is in delivery is taken at once: its GET overlaps
            // the delivery instead of starting after it (a delivery — staging, fsyncs, publishing —
            // takes longer than the GET). The delivery settling ends the wait too.
            if (pipeline.active && (await this.wakeup.wait(idlePollMs, signal, pipeline.settled)) === 'notified') {
              lookAfterDelivery = true;
              return;
            }
            await pipeline.drain();
            // That look left out the events of the loads in delivery: they are due now. Otherwise
            // nothing arrived meanwhile (no second look at an inbox that had nothing).
            if (lookAfterDelivery) {
              lookAfterDelivery = false;
              return;
            }
            return void (await this.wakeup.wait(idlePollMs, signal));
          }
          // Batches are delivered in the order they were fetched; a failure of the one before surfaces here.
          await pipeline.drain();
          pipeline.start(prepared.subjects, () => this.complete(prepared, writeSignal));
        } catch (error) {
          // Aborted writes at the second signal end the loop quietly.
          if (isAbortError(error) && writeSignal.aborted) return void (await this.wakeup.wait(idlePollMs, signal));
          throw error;
        }
      });
    } finally {
      // Stopping finishes the batch in hand: its GETs were made, its events settle now.
      await pipeline.drain().catch((error: unknown) => {
        if (!(isAbortError(error) && writeSignal.aborted)) this.logger.error({ err: error }, 'the last webhook batch could not be completed; its events stay pending');
      });
    }
  }

  /** An event was committed to the inbox: wakes the loop (a receipt is due at once, see `WebhookInboxStore.due`). */
  stored(): void {
    this.wakeup.notify();
  }

  private async paused(): Promise<boolean> {
    const { tokens } = this.deps.client;
    const mark = await tokens.reauthRequired();
    const reason = mark ? `account ${tokens.account} is reauth_required since ${mark.since}: ${mark.reason}` : undefined;
    if (reason !== this.pausedFor) {
      if (reason) this.logger.error({ reason }, 'webhook processing paused: events wait in the inbox until the API account has credentials again');
      else this.logger.info('webhook processing resumed');
      this.pausedFor = reason;
    }
    return reason !== undefined;
  }

  /** One batch of due events (every due event of the `batchSize` longest-waiting loads), fetched and delivered; returns how many rows it took. */
  async processDue(signal: AbortSignal): Promise<number> {
    const prepared = await this.prepare(signal, new Set());
    if (!prepared) return 0;
    await this.complete(prepared, signal);
    return prepared.rows.length;
  }

  /** Takes a batch (leaving out the subjects `busy` in delivery) and fetches what it names; undefined when nothing is due. */
  private async prepare(signal: AbortSignal, busy: ReadonlySet<string>): Promise<Prepared | undefined> {
    // Retry times are set from the server's clock (`settle`): compared with it. A receipt is due
    // whatever it was stamped with (a replica that had not learned the server's clock yet stamped
    // it with its own): `due` takes rows that have not failed at once.
    const now = this.deps.client.clock.now().toISOString();
    const rows = await this.inbox.due(this.options.batchSize, now, undefined, [...busy]);
    if (rows.length === 0) return undefined;
    const errors = new Map<number, string>();
    const items: Item[] = [];
    for (const row of rows) {
      try {
        items.push({ row, event: parseEvent(row.body) });
      } catch (error) {
        errors.set(row.id, describeError(error));
      }
    }
    const startedAt = Date.now();
    const work = await this.refreshAll(items, errors, signal);
    // Events a refresh covered without being in the batch (they arrived before its GET) settle with it.
    for (const item of work.claimed) {
      rows.push(item.row);
      items.push(item);
    }
    const subjects = new Set(rows.map(subjectOf));
    return { rows, items, errors, streams: work.streams, subjects, startedAt, fetchedAt: Date.now() };
  }

  /** Delivers a fetched batch to the sinks of its streams and settles its events. */
  private async complete(batch: Prepared, signal: AbortSignal): Promise<void> {
    const { rows, items, errors } = batch;
    const deliverFrom = Date.now();
    // Streams are independent (own sinks' files, own delivery lock): deliver them in parallel.
    await Promise.all(
      [...batch.streams.values()].map(async (w) => {
        const ids = [...w.rows].filter((id) => !errors.has(id));
        if (ids.length === 0 && w.afterCommit.length === 0) return;
        try {
          await deliverBatch(this.deps.runDeps, {
            definition: w.stream.definition,
            sinks: w.stream.sinks,
            records: w.records,
            rejected: w.rejected,
            batchId: `webhook_${rows[0]!.id}-${rows[rows.length - 1]!.id}`,
            signal,
            afterCommit: w.afterCommit,
          });
          // A refresh is visible to the ERP at once (a file drop publishes its batch).
          for (const failure of await flushSinks(w.stream.sinks, signal)) this.logger.error({ stream: w.stream.definition.name }, failure);
        } catch (error) {
          if (isAbortError(error) && signal.aborted) throw error;
          this.logger.error({ err: error, stream: w.stream.definition.name }, 'webhook refresh could not be delivered; will retry');
          for (const id of w.rows) errors.set(id, `${w.stream.definition.name}: ${describeError(error)}`);
        }
      }),
    );
    const deliveredAt = Date.now();
    await this.settle(rows, items, errors);
    this.logger.debug(
      {
        events: rows.length,
        failed: errors.size,
        fetchMs: batch.fetchedAt - batch.startedAt,
        // Waiting for the batch before it to be delivered.
        queuedMs: deliverFrom - batch.fetchedAt,
        deliverMs: deliveredAt - deliverFrom,
        settleMs: Date.now() - deliveredAt,
      },
      'webhook batch processed',
    );
  }

  private streamOf(name: StreamName): WebhookStreamTarget | undefined {
    return this.deps.streams.get(name);
  }

  /**
   * Fetches what every event points at (each reference once per batch), grouped by stream. A load
   * refresh also claims the load's pending events that are not in the batch, read just before its
   * GET is sent: they arrived before it, so the GET covers their changes (`claimed`). In a burst
   * the GET of a load comes seconds after the batch was taken, and without this every event that
   * arrived in between cost the load a second GET.
   */
  private async refreshAll(items: Item[], errors: Map<number, string>, signal: AbortSignal): Promise<{ streams: Map<StreamName, StreamWork>; claimed: Item[] }> {
    const work = new Map<StreamName, StreamWork>();
    const claimed: Item[] = [];
    const inBatch = new Set(items.map((i) => i.row.id));
    const add = (stream: WebhookStreamTarget, refreshed: Refreshed, rowIds: readonly number[]) => {
      let w = work.get(stream.definition.name);
      if (!w) work.set(stream.definition.name, (w = { stream, records: [], rejected: [], afterCommit: [], rows: new Set() }));
      w.records.push(...refreshed.records);
      for (const item of refreshed.rejected ?? []) w.rejected.push({ ...item, index: w.rejected.length });
      w.afterCommit.push(...refreshed.afterCommit);
      for (const id of rowIds) w.rows.add(id);
    };
    interface Fetch {
      rows: number[];
      stream: WebhookStreamTarget;
      fetch: () => Promise<Refreshed>;
      /** The load a load refresh is for: its other pending events are claimed before the GET. */
      loadRef?: string;
    }
    const fetches = new Map<string, Fetch>();
    const want = (key: string, stream: WebhookStreamTarget, row: number, fetch: () => Promise<Refreshed>, loadRef?: string) => {
      const existing = fetches.get(key);
      // Rows come oldest first: the newest event's details (tombstone time) win.
      if (existing) {
        existing.rows.push(row);
        existing.fetch = fetch;
      } else fetches.set(key, { rows: [row], stream, fetch, loadRef });
    };
    const loads = this.streamOf('loads');
    const invoices = this.streamOf('invoices');
    const documents = this.streamOf('loadDocuments');
    const documentFiles = this.streamOf('documentFiles');
    const events = this.streamOf('events');
    const client = this.deps.client;
    const takenAt = Date.now();
    const claim = async (f: Fetch) => {
      // A GET sent right after the batch was taken would find next to nothing to claim: the read
      // pays off when the GET waited for the rate budget (a burst), not at every refresh.
      if (f.loadRef === undefined || Date.now() - takenAt < (this.options.claimAfterMs ?? CLAIM_AFTER_MS)) return;
      for (const row of await this.inbox.pendingFor(f.loadRef, [...LOAD_FAMILIES])) {
        if (inBatch.has(row.id)) continue;
        let event: ParsedEvent;
        try {
          event = parseEvent(row.body);
        } catch {
          continue; // left for its own batch, where it is parked as unreadable
        }
        inBatch.add(row.id);
        claimed.push({ row, event });
        f.rows.push(row.id);
        if (events) add(events, { records: [eventRecord(row, event)], afterCommit: [] }, [row.id]);
      }
    };
    for (const { row, event } of items) {
      const ref = event.referenceNumber;
      const loadId = typeof event.payload._id === 'string' ? event.payload._id : null;
      const occurredAt = row.occurred_at ?? row.received_at;
      if (LOAD_FAMILIES.has(event.family) && ref && loads) {
        const options = loads.options as { includeChargeSets?: boolean; includeVendorPay?: boolean };
        want(`load:${ref}`, loads, row.id, () => refreshLoad(client, ref, { ...options, loadId, occurredAt }, signal), ref);
      } else if (event.family === 'invoice' && invoices) {
        const includePaymentHistory = (invoices.options as { includePaymentHistory?: boolean }).includePaymentHistory !== false;
        for (const invoiceRef of invoiceLoadReferences(event.payload)) {
          want(`invoice:${invoiceRef}`, invoices, row.id, () => refreshInvoice(client, invoiceRef, includePaymentHistory, signal));
        }
      } else if (event.family === 'document' && ref && documents) {
        const type = typeOfDocumentEvent(event);
        if (type) want(`document:${ref}\u0000${type}`, documents, row.id, () => refreshDocuments(client, ref, type, loadId, signal));
      }
      if (event.family === 'document' && ref && documentFiles) {
        const type = typeOfDocumentEvent(event);
        const files = this.deps.runDeps.files?.get('documentFiles');
        const options = documentFiles.options as DocumentFilesOptions;
        if (type) want(`documentFiles:${ref}\u0000${type}`, documentFiles, row.id, () => refreshDocumentFiles(documentFilesContext({ client, files, options, logger: this.logger }), this.deps.runDeps.stores.side, ref, type, loadId, signal));
      }
      if (events) add(events, { records: [eventRecord(row, event)], afterCommit: [] }, [row.id]);
    }
    await Promise.all(
      [...fetches.values()].map((f) =>
        this.limit(async () => {
          try {
            await claim(f);
            add(f.stream, await f.fetch(), f.rows);
          } catch (error) {
            if (isAbortError(error) && signal.aborted) throw error;
            for (const id of f.rows) errors.set(id, describeError(error));
          }
        }),
      ),
    );
    return { streams: work, claimed };
  }

  private async settle(rows: InboxRow[], items: Item[], errors: Map<number, string>): Promise<void> {
    const now = this.deps.client.clock.now();
    const family = new Map(items.map((i) => [i.row.id, i.event.family]));
    // A row armed again while its refresh was in flight stays pending: the next batch refreshes it.
    const settled = new Set(await this.inbox.markDone(rows.filter((r) => !errors.has(r.id)), now.toISOString()));
    const done = rows.filter((r) => settled.has(r.id));
    for (const row of done) {
      this.deps.metrics.webhookEventsProcessed.inc({ family: family.get(row.id) ?? 'unknown', outcome: 'done' });
      // Only deliveries measure the webhook path; log rows were waiting for a restart.
      if (row.source === 'delivery') this.deps.metrics.webhookDelaySeconds.observe(Math.max(0, now.getTime() - Date.parse(row.received_at)) / 1000);
    }
    for (const row of rows) {
      const error = errors.get(row.id);
      if (error === undefined) continue;
      const delay = backoffDelay({ attempt: row.attempts, baseMs: 1_000, maxMs: MAX_RETRY_DELAY_MS });
      const state = await this.inbox.markFailed(row, error, new Date(now.getTime() + delay).toISOString(), this.options.maxAttempts);
      this.deps.metrics.webhookEventsProcessed.inc({ family: family.get(row.id) ?? 'unknown', outcome: state === 'failed' ? 'failed' : 'retry' });
      const level = state === 'failed' ? 'error' : 'warn';
      this.logger[level]({ event: row.event_type, reference: row.reference_number, attempts: row.attempts + 1, error }, state === 'failed' ? 'webhook event parked as failed and quarantined (polling still covers it; see freight-sync rejected list)' : 'webhook event will be retried');
    }
  }
}

/** The `events` stream representation of one inbox row (see streams/events.ts). */
function eventRecord(row: InboxRow, event: ParsedEvent): RawRecord {
  return {
    event_key: row.event_key,
    eventType: event.eventType,
    family: event.family,
    reference_number: event.referenceNumber,
    occurred_at: row.occurred_at,
    received_at: row.received_at,
    source: row.source,
    payload: event.payload,
  };
}

/** The document type a `document#*` event names (`changedValues.type`, §6.4). */
function typeOfDocumentEvent(event: ParsedEvent): string | null {
  const changed = event.payload.changedValues as Record<string, unknown> | undefined;
  return typeof changed?.type === 'string' ? changed.type : null;
}
