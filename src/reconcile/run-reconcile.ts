import { randomBytes } from 'node:crypto';
import type { RecordSink, SinkReader, StreamMapper } from '../contracts/index.js';
import { ensureServerClock } from '../sync/window-plan.js';
import type { AnyStreamDefinition, RawRecord, RunPlan } from '../sync/stream-definition.js';
import type { StreamRunDeps } from '../sync/stream-runner.js';
import { listPeriod, toEntries, type ApiEntry, type Listing } from './api-listing.js';
import { compareRow, compareSink, statusCounts, type Candidate, type SinkComparison } from './compare-sink.js';
import { lookUp, type LookupContext, type LookupResult } from './lookups.js';
import { MappedView } from './mapped-view.js';
import { repairSink } from './repair.js';
import type { Difference, ReconcileReport, SinkReconcile, StreamCoverage } from './report.js';
import { isBudgetError, RequestBudget } from './request-budget.js';

/** The streams reconcile can check: they list by a period and can be looked up by key. */
export const RECONCILE_STREAMS = ['loads', 'invoices', 'bills'] as const;

export interface ReconcileSinkInput {
  readonly name: string;
  /** Where `--repair` delivers (the same sink the sync writes to). */
  readonly sink: RecordSink;
  /** Absent when the connector cannot read back: reported, not skipped silently. */
  readonly reader: SinkReader | undefined;
  readonly mapper: StreamMapper;
}

export interface ReconcileStreamInput {
  readonly definition: AnyStreamDefinition;
  readonly pageSize: number;
  readonly options: Record<string, unknown>;
  /** The stream's backfill plan for a range (its window settings). */
  readonly plan: (from: string, to: string) => RunPlan;
  readonly safetyLagMs: number;
  readonly sinks: readonly ReconcileSinkInput[];
}

export interface ReconcileInput {
  readonly deps: StreamRunDeps;
  readonly streams: readonly ReconcileStreamInput[];
  /** ISO bounds; default: the last `days` days up to the server's clock. */
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly days: number;
  readonly maxRequests: number;
  readonly repair: boolean;
  readonly signal: AbortSignal;
}

const DAY_MS = 86_400_000;

/**
 * `freight-sync reconcile`: for each stream, lists the API's records of the period, compares each
 * sink's read-back with them through the sink's own mapping, looks up the sink-only rows one by
 * one (gone → extra; moved out of the period → compared), and with `repair` re-delivers exactly
 * the differing keys. Read-only unless `repair`. Every API request counts against `maxRequests`;
 * what the budget left unchecked is in the report.
 */
export async function runReconcile(input: ReconcileInput): Promise<ReconcileReport> {
  const startedAt = new Date().toISOString();
  const budget = new RequestBudget(input.deps.client, input.maxRequests);
  const client = budget.guard();
  const coverage: StreamCoverage[] = [];
  const results: SinkReconcile[] = [];
  let clockKnown = true;
  try {
    await ensureServerClock(client, input.signal);
  } catch (error) {
    if (!isBudgetError(error)) throw error;
    clockKnown = false;
  }
  const serverNow = input.deps.client.clock.now().getTime();
  const to = input.to ?? new Date(serverNow).toISOString();
  const from = input.from ?? new Date(Date.parse(to) - input.days * DAY_MS).toISOString();
  const runId = `${to.replace(/[^0-9]/g, '').slice(0, 14)}_${randomBytes(3).toString('hex')}`;

  for (const stream of input.streams) {
    const name = stream.definition.name;
    if (!clockKnown || budget.exhausted) {
      coverage.push({ stream: name, complete: false, listedThrough: null, notChecked: [`request budget used up before ${name} was checked`], apiRejected: 0 });
      continue;
    }
    const readable = stream.sinks.filter((s) => s.reader);
    const notChecked = stream.sinks.filter((s) => !s.reader).map((s) => `sink ${s.name} cannot be read back (its connector has no reader)`);
    // The period ends where the sync's own window would: records stamped a moment ago may not be visible yet.
    const end = new Date(Math.min(Date.parse(to), serverNow - stream.safetyLagMs)).toISOString();
    const views = new Map(readable.map((s) => [s.name, new MappedView(s.mapper)] as const));
    const enrich = input.deps.hooks?.enrich ?? ((_: string, records: readonly RawRecord[]) => Promise.resolve([...records]));
    const listingCtx = { definition: stream.definition, client, side: input.deps.stores.side, logger: input.deps.logger, pageSize: stream.pageSize, options: stream.options, views, enrich, signal: input.signal };
    const listing = await listPeriod(listingCtx, stream.plan(from, end));
    const lookupCtx: LookupContext = { client, definition: stream.definition, pageSize: stream.pageSize, options: stream.options, signal: input.signal };

    const compared = new Map<string, SinkComparison>();
    for (const sink of readable) {
      compared.set(sink.name, await compareSink({ stream: name, sink: sink.name, view: views.get(sink.name)!, reader: sink.reader!, entries: listing.entries, period: { from, to: end, listedThrough: listing.listedThrough }, signal: input.signal }));
    }
    const known = await lookUpCandidates([...compared.values()].flatMap((c) => c.candidates), lookupCtx);
    const lookedUp = new Map((await toEntries(listingCtx, [...known.found.values()])).map((e) => [e.key, e] as const));
    if (known.unknown.size > 0 && [...known.unknown.values()].includes('request budget used up')) notChecked.push(`request budget used up while looking up sink rows the ${name} listing did not return`);

    for (const sink of readable) {
      const comparison = compared.get(sink.name)!;
      const unchecked = classifyCandidates(sink.name, comparison, known, lookedUp, listing);
      const result: SinkReconcile = {
        stream: name,
        sink: sink.name,
        apiRecords: comparison.apiRecords,
        sinkRows: comparison.sinkRows,
        matching: comparison.matching,
        differences: comparison.differences,
        unchecked,
        statuses: statusCounts(comparison.statuses),
        invoiceTotals: comparison.totals?.available ? comparison.totals.result() : undefined,
        repair: input.repair && comparison.differences.length > 0 ? await repairOne(input, sink, comparison.differences, known, listing, lookupCtx, runId) : undefined,
      };
      results.push(result);
    }
    const complete = listing.complete && notChecked.length === 0 && results.filter((r) => r.stream === name).every((r) => r.unchecked.length === 0);
    coverage.push({ stream: name, complete, listedThrough: listing.listedThrough, notChecked: [...listing.notChecked, ...notChecked], apiRejected: listing.rejected });
  }
  return { startedAt, finishedAt: new Date().toISOString(), from, to, repair: input.repair, maxRequests: input.maxRequests, requests: budget.used, coverage, results };
}

/** One lookup per distinct key, whichever sinks it is a candidate in. */
async function lookUpCandidates(candidates: readonly Candidate[], ctx: LookupContext): Promise<LookupResult> {
  const unique = new Map(candidates.map((c) => [c.key, { key: c.key, loadReference: c.loadReference }] as const));
  return unique.size > 0 ? lookUp([...unique.values()], ctx) : { found: new Map(), gone: new Set(), unknown: new Map() };
}

/**
 * Sorts the sink-only rows by what the API said about their key: gone → extra; found (it moved
 * out of the period, or the list omitted it) → compared like any listed record; unknown →
 * unchecked. Rows beyond the point a budget-stopped listing reached are unchecked too.
 */
function classifyCandidates(sink: string, comparison: SinkComparison, known: LookupResult, lookedUp: ReadonlyMap<string, ApiEntry>, listing: Listing): { key: string; reason: string }[] {
  const unchecked = comparison.beyondListing.map((key) => ({ key, reason: `not listed: the listing stopped at ${listing.listedThrough ?? 'the period start'} (request budget)` }));
  for (const candidate of comparison.candidates) {
    const base = { key: candidate.key, apiUpdatedAt: null, sinkUpdatedAt: candidate.cells._updated_at ?? null, repairable: true };
    const entry = lookedUp.get(candidate.key);
    if (known.gone.has(candidate.key)) comparison.differences.push({ ...base, kind: 'extra', detail: 'in the sink, not in the API' });
    else if (entry) {
      // Found by key: the list omitted it or it moved out of the period; its money counts on the API side like the sink's.
      comparison.countApi(entry);
      comparison.apiRecords += 1;
      const difference = compareRow(sink, entry, candidate.cells);
      if (difference) comparison.differences.push(difference);
      else comparison.matching += 1;
    } else unchecked.push({ key: candidate.key, reason: known.unknown.get(candidate.key) ?? 'not found by key' });
  }
  return unchecked;
}

async function repairOne(
  input: ReconcileInput,
  sink: ReconcileSinkInput,
  differences: readonly Difference[],
  known: LookupResult,
  listing: Listing,
  lookup: LookupContext,
  runId: string,
) {
  const loadReferences = new Map([...listing.entries.values()].map((e) => [e.key, e.loadReference] as const));
  return repairSink({ deps: input.deps, sink: { name: sink.name, sink: sink.sink }, differences, known, loadReferences, lookup, runId });
}
