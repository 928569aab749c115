import type { SyncRecord } from '../contracts/index.js';
import type { QuarantineRow, SinkRefusal } from '../state/stores/quarantine-store.js';
import type { StateStores } from '../state/stores/index.js';
import { isAbortError } from '../util/abort.js';
import { chunks } from '../util/chunks.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { withStreamDelivery } from './delivery-lock.js';
import { buildBatch, writeToSink, type NamedSink } from './sink-ack.js';
import type { AnyStreamDefinition, RawRecord } from './stream-definition.js';

/** Quarantined records re-delivered per run of a stream; the rest waits for the next run. */
const DUE_PER_RUN = 1_000;
/** Records per re-delivery batch. */
const PER_BATCH = 500;

export type RedeliveryResult = 'delivered' | 'rejected' | 'failed' | 'no-sink';

export interface RedeliveryOutcome {
  delivered: number;
  deletes: number;
  /** Refused again (their entry stays, with a longer wait). */
  rejected: number;
  /** Per quarantine entry: what happened, and why when it did not land. */
  entries: Array<{ id: number; key: string; sink: string; result: RedeliveryResult; reason: string | null }>;
}

export interface RedeliverRequest {
  definition: AnyStreamDefinition;
  /** The stream's sinks by name; an entry for a sink that is no longer configured stays. */
  sinks: readonly NamedSink[];
  signal: AbortSignal;
  logger: Logger;
  /** Written to the rows as `_run_id`: the run that re-delivered them (`rejected-retry` from the CLI). */
  runId?: string;
}

/** Re-delivers the sink refusals of a stream whose next attempt is due (each run does this first). */
export async function redeliverDue(deps: { stores: StateStores }, request: RedeliverRequest): Promise<RedeliveryOutcome> {
  const due = await deps.stores.quarantine.dueSinkEntries(request.definition.name, DUE_PER_RUN);
  return redeliver(deps, request, due);
}

/**
 * Delivers quarantined sink refusals again — each only to the sink that refused it: the other
 * sinks acknowledged that version when it was first delivered (deliverBatch). What lands leaves
 * the quarantine, and once no sink waits for a key any more its content hash is remembered, so
 * polling treats it as delivered. What is refused again stays with one more attempt and a longer
 * wait (backoff). A sink that fails outright (connection) leaves its entries waiting likewise.
 */
export async function redeliver(deps: { stores: StateStores }, request: RedeliverRequest, entries: readonly QuarantineRow[]): Promise<RedeliveryOutcome> {
  const outcome: RedeliveryOutcome = { delivered: 0, deletes: 0, rejected: 0, entries: [] };
  const stream = request.definition.name;
  const bySink = new Map<string, QuarantineRow[]>();
  for (const entry of entries) {
    if (entry.kind !== 'sink' || entry.stream !== stream) continue;
    bySink.set(entry.sink, [...(bySink.get(entry.sink) ?? []), entry]);
  }
  for (const [sinkName, list] of bySink) {
    const target = request.sinks.find((s) => s.name === sinkName);
    if (!target) {
      for (const e of list) outcome.entries.push({ id: e.id, key: e.item_key, sink: sinkName, result: 'no-sink', reason: `connector ${sinkName} is not a sink of stream ${stream} any more` });
      continue;
    }
    for (const part of chunks(list, PER_BATCH)) {
      await withStreamDelivery(deps.stores, stream, () => redeliverPart(deps.stores, request, target, part, outcome));
    }
  }
  return outcome;
}

async function redeliverPart(stores: StateStores, request: RedeliverRequest, target: NamedSink, part: readonly QuarantineRow[], outcome: RedeliveryOutcome): Promise<void> {
  const { definition } = request;
  const stream = definition.name;
  const syncedAt = new Date().toISOString();
  // Entries settled by a newer version while this one waited for the lock are gone: skip them.
  const current = new Set((await stores.quarantine.list({ ids: part.map((e) => e.id) })).map((e) => e.id));
  const items: Array<{ entry: QuarantineRow; record: SyncRecord; hash: string }> = [];
  const unreadable: SinkRefusal[] = [];
  for (const entry of part) {
    if (!current.has(entry.id)) continue;
    const data = JSON.parse(entry.raw) as RawRecord;
    try {
      const record: SyncRecord = { stream, key: entry.item_key, op: definition.op(data), updatedAt: definition.updatedAt(data), data, syncedAt };
      items.push({ entry, record, hash: entry.content_hash ?? '' });
    } catch (error) {
      unreadable.push(refusalOf(entry, describeError(error)));
    }
  }
  if (items.length === 0 && unreadable.length === 0) return;
  let refused = new Map<string, string>();
  if (items.length > 0) {
    const batch = buildBatch(stream, 'quarantine', items, request.runId ?? 'quarantine');
    try {
      refused = await writeToSink(target, batch, request.signal);
    } catch (error) {
      if (isAbortError(error) || request.signal.aborted) throw error;
      const reason = describeError(error);
      request.logger.warn({ stream, sink: target.name, err: error }, 're-delivery of quarantined records failed; they wait for their next attempt');
      await stores.quarantine.postpone(items.map((i) => i.entry.id), null);
      for (const { entry } of items) outcome.entries.push({ id: entry.id, key: entry.item_key, sink: target.name, result: 'failed', reason });
      return;
    }
  }
  const landed = items.filter((i) => !refused.has(i.record.key));
  const again = [...unreadable, ...items.filter((i) => refused.has(i.record.key)).map((i) => refusalOf(i.entry, refused.get(i.record.key)!))];
  await stores.transaction(async (tx) => {
    await tx.quarantine.remove(landed.map((i) => i.entry.id));
    const stillHeld = await tx.quarantine.keysStillHeld(stream, landed.map((i) => i.record.key));
    await tx.seen.remember(stream, landed.filter((i) => !stillHeld.has(i.record.key) && i.hash !== '').map((i) => ({ key: i.record.key, hash: i.hash })));
    await tx.quarantine.recordSinkRefusals(stream, again);
  });
  for (const { entry, record } of landed) {
    outcome.delivered += 1;
    if (record.op === 'delete') outcome.deletes += 1;
    outcome.entries.push({ id: entry.id, key: entry.item_key, sink: target.name, result: 'delivered', reason: null });
  }
  for (const refusal of again) {
    outcome.rejected += 1;
    outcome.entries.push({ id: part.find((e) => e.item_key === refusal.key)!.id, key: refusal.key, sink: target.name, result: 'rejected', reason: refusal.reason });
  }
}

function refusalOf(entry: QuarantineRow, reason: string): SinkRefusal {
  return { key: entry.item_key, sink: entry.sink, reason, raw: JSON.parse(entry.raw) as unknown, hash: entry.content_hash ?? '', batchId: entry.batch_id ?? 'quarantine' };
}
