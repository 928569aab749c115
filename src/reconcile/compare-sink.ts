import { RAW_COLUMN, type SinkReader, type SinkRow } from '../contracts/index.js';
import { invoiceFacts } from '../sync/strategies/invoices.js';
import type { ApiEntry } from './api-listing.js';
import { instant, sameCell } from './compare-cells.js';
import { InvoiceTotals } from './invoice-totals.js';
import type { MappedView } from './mapped-view.js';
import type { Difference, StatusCount } from './report.js';

/** Columns named in a stale row's detail; the rest are counted. */
const DETAIL_COLUMNS = 5;

/** A live sink row of the period the listing did not return: extra, or moved out of the period. */
export interface Candidate {
  readonly key: string;
  readonly cells: SinkRow;
  readonly loadReference: string | undefined;
}

export interface SinkComparison {
  readonly differences: Difference[];
  matching: number;
  apiRecords: number;
  sinkRows: number;
  readonly candidates: Candidate[];
  /** Live rows of the period after the point the listing reached (budget): not checked. */
  readonly beyondListing: string[];
  readonly statuses: Map<string, { api: number; sink: number }>;
  readonly totals: InvoiceTotals | undefined;
  /** Counts an API record in the status counts and invoice totals (listed, or found by key later). */
  countApi: (entry: ApiEntry) => void;
}

export interface CompareContext {
  readonly stream: string;
  readonly sink: string;
  readonly view: MappedView;
  readonly reader: SinkReader;
  readonly entries: ReadonlyMap<string, ApiEntry>;
  readonly period: { readonly from: string; readonly to: string; readonly listedThrough: string | null };
  readonly signal: AbortSignal;
}

/**
 * Compares what one sink holds for a stream with the listed API records: reads the sink's root
 * table once (page by page), matches rows by the mapping's key, and sorts every difference into
 * missing, stale or extra-candidate. Sink rows outside the period are only looked at when the API
 * listed their key.
 */
export async function compareSink(ctx: CompareContext): Promise<SinkComparison> {
  const { view } = ctx;
  const byRow = new Map<string, ApiEntry>();
  for (const entry of ctx.entries.values()) {
    const row = entry.rows.get(ctx.sink);
    byRow.set(row && 'rowKey' in row ? row.rowKey : `unmapped:${entry.key}`, entry);
  }
  const status = view.column(['status'], ['status']);
  const out: SinkComparison = {
    differences: [],
    matching: 0,
    apiRecords: ctx.entries.size,
    sinkRows: 0,
    candidates: [],
    beyondListing: [],
    statuses: new Map(),
    totals: ctx.stream === 'invoices' ? new InvoiceTotals(view) : undefined,
    countApi: () => undefined,
  };
  const count = (value: string | null | undefined, side: 'api' | 'sink') => {
    const name = value ?? '(none)';
    const entry = out.statuses.get(name) ?? { api: 0, sink: 0 };
    entry[side] += 1;
    out.statuses.set(name, entry);
  };
  out.countApi = (entry) => {
    const row = entry.rows.get(ctx.sink);
    if (entry.op === 'delete' || !row || !('cells' in row)) return;
    count(status ? row.cells[status] : null, 'api');
    out.totals?.addApi(row.cells);
  };
  for (const entry of ctx.entries.values()) out.countApi(entry);

  const seen = new Set<string>();
  const withRaw = ctx.stream === 'invoices';
  for await (const page of ctx.reader.readRows(ctx.stream, { columns: view.readColumns(withRaw) }, ctx.signal)) {
    for (const cells of page) {
      const rowKey = view.rowKey(cells);
      const entry = byRow.get(rowKey);
      const live = cells._op !== 'delete';
      const inPeriod = live && within(periodValue(ctx.stream, view, cells), ctx.period.from, ctx.period.to);
      if (inPeriod) {
        out.sinkRows += 1;
        count(status ? cells[status] : null, 'sink');
        out.totals?.addSink(cells);
      }
      if (entry) {
        seen.add(entry.key);
        const difference = compareRow(ctx.sink, entry, cells);
        if (difference) out.differences.push(difference);
        else out.matching += 1;
      } else if (inPeriod) {
        const key = view.recordKey(cells);
        const value = periodValue(ctx.stream, view, cells);
        if (ctx.period.listedThrough !== null && within(value, ctx.period.from, ctx.period.listedThrough)) {
          out.candidates.push({ key, cells, loadReference: loadReferenceOf(view, cells) });
        } else {
          out.beyondListing.push(key);
        }
      }
    }
  }
  for (const entry of ctx.entries.values()) {
    if (seen.has(entry.key) || entry.op === 'delete') continue;
    const row = entry.rows.get(ctx.sink);
    const detail = row && 'problem' in row ? `cannot be mapped for this sink: ${row.problem}` : 'not in the sink';
    out.differences.push({ kind: 'missing', key: entry.key, detail, apiUpdatedAt: entry.updatedAt, sinkUpdatedAt: null, repairable: !(row && 'problem' in row) });
  }
  return out;
}

/** The difference between an API record and the sink's row for it, or null when they agree. */
export function compareRow(sink: string, entry: ApiEntry, cells: SinkRow): Difference | null {
  const base = { key: entry.key, apiUpdatedAt: entry.updatedAt, sinkUpdatedAt: cells._updated_at ?? null, repairable: true };
  const live = cells._op !== 'delete';
  if (entry.op === 'delete') return live ? { ...base, kind: 'stale', detail: 'deleted in the API, live in the sink' } : null;
  if (!live) return { ...base, kind: 'missing', detail: 'live in the API, a tombstone in the sink' };
  const row = entry.rows.get(sink);
  if (!row || 'problem' in row) return { ...base, kind: 'stale', detail: `cannot be mapped for this sink: ${row?.problem ?? 'no mapping'}`, repairable: false };
  const changes: string[] = [];
  if (!sameCell(cells._updated_at ?? null, row.cells._updated_at ?? null)) changes.push(`updatedAt: sink ${cells._updated_at ?? '(none)'}, api ${row.cells._updated_at ?? '(none)'}`);
  for (const [column, value] of Object.entries(row.cells)) {
    if (column.startsWith('_') || !(column in cells)) continue;
    if (!sameCell(cells[column] ?? null, value)) changes.push(`${column}: sink ${cells[column] ?? '(empty)'}, api ${value ?? '(empty)'}`);
  }
  if (changes.length === 0) return null;
  const more = changes.length > DETAIL_COLUMNS ? `; and ${changes.length - DETAIL_COLUMNS} more column(s)` : '';
  return { ...base, kind: 'stale', detail: changes.slice(0, DETAIL_COLUMNS).join('; ') + more };
}

/**
 * The date a sink row falls in the period by: the record's updatedAt (`_updated_at`), except for
 * invoices, which the API lists by billing date (from `_raw`, else the billing-date column).
 */
function periodValue(stream: string, view: MappedView, cells: SinkRow): string | null {
  if (stream !== 'invoices') return cells._updated_at ?? null;
  const raw = parseRaw(cells);
  if (raw) return invoiceFacts(raw).billingDate;
  const column = view.column(['billingDate'], ['billing_date']);
  return (column ? cells[column] : null) ?? cells._updated_at ?? null;
}

function loadReferenceOf(view: MappedView, cells: SinkRow): string | undefined {
  const raw = parseRaw(cells);
  if (raw) return invoiceFacts(raw).loadReferenceNumbers[0];
  const column = view.column([], ['load_reference_numbers', 'load_reference_number']);
  return (column ? cells[column] : null)?.split(/[;,\s]+/)[0] || undefined;
}

function parseRaw(cells: SinkRow): Record<string, unknown> | undefined {
  const text = cells[RAW_COLUMN];
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function within(value: string | null, from: string, to: string): boolean {
  const at = instant(value);
  return at !== null && at >= Date.parse(from) && at <= Date.parse(to);
}

export function statusCounts(statuses: ReadonlyMap<string, { api: number; sink: number }>): StatusCount[] {
  return [...statuses].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([status, c]) => ({ status, api: c.api, sink: c.sink }));
}
