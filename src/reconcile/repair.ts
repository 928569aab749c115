import type { RecordSink } from '../contracts/index.js';
import { REMOVED_MARKER } from '../sync/strategies/snapshot.js';
import { invoiceFacts } from '../sync/strategies/invoices.js';
import { deliverBatch, type StreamRunDeps } from '../sync/stream-runner.js';
import { flushSinks } from '../sync/sink-ack.js';
import type { RawRecord } from '../sync/stream-definition.js';
import { lookUp, type LookupContext, type LookupResult } from './lookups.js';
import type { Difference, RepairOutcome } from './report.js';

const RECORDS_PER_BATCH = 200;

export interface RepairRequest {
  readonly deps: StreamRunDeps;
  readonly sink: { readonly name: string; readonly sink: RecordSink };
  readonly differences: readonly Difference[];
  /** What the reconcile already fetched by key (lookups of extra candidates); fetched again otherwise. */
  readonly known: LookupResult;
  /** Invoices: the load reference number of each key, to fetch it by. */
  readonly loadReferences: ReadonlyMap<string, string | undefined>;
  readonly lookup: LookupContext;
  readonly runId: string;
}

/**
 * Re-delivers exactly the differing keys to the one sink that differs, through the engine's own
 * `deliverBatch` (same hooks, same acknowledgement, same bookkeeping): missing and stale keys
 * with the API's latest version fetched now, keys the API confirms gone as tombstones (versioned
 * like the sink's row, so the tombstone replaces it and any later real version still wins). The
 * content-hash memory of those keys is forgotten first: it says the sink has a version it lost.
 */
export async function repairSink(request: RepairRequest): Promise<RepairOutcome> {
  const { definition } = request.lookup;
  const stream = definition.name;
  const notRepaired: { key: string; reason: string }[] = [];
  const wanted = request.differences.filter((d) => {
    if (!d.repairable) notRepaired.push({ key: d.key, reason: d.detail });
    return d.repairable;
  });
  const toFetch = wanted
    .filter((d) => d.kind !== 'extra' && !request.known.found.has(d.key) && !request.known.gone.has(d.key))
    .map((d) => ({ key: d.key, loadReference: request.loadReferences.get(d.key) }));
  const fetched = toFetch.length > 0 ? await lookUp(toFetch, request.lookup) : { found: new Map(), gone: new Set<string>(), unknown: new Map<string, string>() };

  const records: RawRecord[] = [];
  let tombstones = 0;
  for (const difference of wanted) {
    const record = request.known.found.get(difference.key) ?? fetched.found.get(difference.key);
    if (record) records.push(record);
    else if (request.known.gone.has(difference.key) || fetched.gone.has(difference.key)) {
      records.push({ [REMOVED_MARKER]: true, key: difference.key, updatedAt: difference.sinkUpdatedAt });
      tombstones += 1;
    } else notRepaired.push({ key: difference.key, reason: fetched.unknown.get(difference.key) ?? request.known.unknown.get(difference.key) ?? 'not found in the API' });
  }

  let delivered = 0;
  for (let i = 0; i < records.length; i += RECORDS_PER_BATCH) {
    const batch = records.slice(i, i + RECORDS_PER_BATCH);
    const keys = batch.map((r) => definition.key(r));
    await request.deps.stores.seen.forgetKeys(stream, keys);
    const real = batch.filter((r) => r[REMOVED_MARKER] !== true);
    const outcome = await deliverBatch(request.deps, {
      definition,
      sinks: [request.sink],
      records: batch,
      batchId: `reconcile_${request.runId}_${request.sink.name}_${i / RECORDS_PER_BATCH}`,
      signal: request.lookup.signal,
      // Invoices feed the re-poll of open invoices exactly as a polled page does.
      afterCommit: stream === 'invoices' && real.length > 0 ? [(side) => side.recordInvoices(real.map(invoiceFacts))] : [],
    });
    delivered += outcome.delivered;
  }
  // The repaired rows must be visible before the sink is read again.
  const failures = await flushSinks([request.sink], request.lookup.signal);
  if (failures.length > 0) throw new Error(failures.join('; '));
  return { delivered: delivered - tombstones, tombstones, notRepaired };
}
