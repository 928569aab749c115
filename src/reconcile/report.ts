/** What `freight-sync reconcile` found: the shapes of the table, `--json` and the CSV report. */

export type DifferenceKind = 'missing' | 'stale' | 'extra';

export interface Difference {
  readonly kind: DifferenceKind;
  /** The record's key in the stream (a load's reference number, an invoice's `_id`, …). */
  readonly key: string;
  /** What differs, e.g. `total_amount: sink 100.00, api 120.00`. */
  readonly detail: string;
  readonly apiUpdatedAt: string | null;
  readonly sinkUpdatedAt: string | null;
  /** False when re-delivering cannot fix it (the record cannot be mapped for this sink). */
  readonly repairable: boolean;
}

export interface StatusCount {
  readonly status: string;
  readonly api: number;
  readonly sink: number;
}

/** Invoice money of one customer and billing month, summed exactly (big.js) on both sides. */
export interface InvoiceTotal {
  readonly customer: string;
  /** `YYYY-MM` of the billing date. */
  readonly month: string;
  readonly apiInvoices: number;
  readonly sinkInvoices: number;
  readonly apiTotal: string;
  readonly sinkTotal: string;
  readonly apiPaid: string;
  readonly sinkPaid: string;
}

export interface RepairOutcome {
  /** Records re-delivered from the API's latest version (upserts and deletes). */
  readonly delivered: number;
  /** Tombstones written for keys the API confirmed gone. */
  readonly tombstones: number;
  /** Keys that could not be repaired, each with why. */
  readonly notRepaired: readonly { key: string; reason: string }[];
}

export interface SinkReconcile {
  readonly stream: string;
  readonly sink: string;
  /** API records of the period compared (listed, plus sink rows looked up one by one). */
  readonly apiRecords: number;
  /** Live rows the sink holds for the period. */
  readonly sinkRows: number;
  readonly matching: number;
  readonly differences: readonly Difference[];
  /** Keys that could not be checked, each with why (budget used up, no way to look it up). */
  readonly unchecked: readonly { key: string; reason: string }[];
  readonly statuses: readonly StatusCount[];
  /** Invoices only, when the mapping has the total, paid, customer and billing date columns. */
  readonly invoiceTotals: readonly InvoiceTotal[] | undefined;
  readonly repair: RepairOutcome | undefined;
}

export interface StreamCoverage {
  readonly stream: string;
  /** True when the whole period was listed and every candidate looked up. */
  readonly complete: boolean;
  /** The API was listed from the period's start up to here (ISO); null when nothing was listed. */
  readonly listedThrough: string | null;
  /** Why the check is partial; empty when complete. */
  readonly notChecked: readonly string[];
  /** List elements the API returned that failed their schema (quarantined by sync, not compared). */
  readonly apiRejected: number;
}

export interface ReconcileReport {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly from: string;
  readonly to: string;
  readonly repair: boolean;
  readonly maxRequests: number;
  readonly requests: number;
  readonly coverage: readonly StreamCoverage[];
  readonly results: readonly SinkReconcile[];
}

/** Differences of every kind, plus unchecked keys: 0 means the ERP provably matches. */
export function countOf(result: SinkReconcile, kind: DifferenceKind): number {
  return result.differences.filter((d) => d.kind === kind).length;
}

export function reportIsClean(report: ReconcileReport): boolean {
  return report.coverage.every((c) => c.complete) && report.results.every((r) => r.differences.length === 0 && r.unchecked.length === 0);
}
