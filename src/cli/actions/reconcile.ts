import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { assertReconcileStreams, reconcilableStreams, reconcileApp } from '../../app/reconcile.js';
import { installShutdown } from '../../app/shutdown.js';
import { reportCsv } from '../../reconcile/report-csv.js';
import { countOf, reportIsClean, type ReconcileReport } from '../../reconcile/report.js';
import { UsageError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderTable } from '../table.js';
import { backfillBound } from '../commands/backfill.js';

export interface ReconcileOptions {
  from?: string;
  to?: string;
  days?: string;
  stream?: string[];
  maxRequests?: string;
  repair?: boolean;
  json?: boolean;
  report?: string;
}

/** Differences listed in the table; `--json` and `--report` carry all of them. */
const TABLE_DIFFERENCES = 50;

function positiveInteger(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${flag}: expected a whole number of at least 1, got "${value}"`);
  return Number(value);
}

/** The work of `freight-sync reconcile` (options and help in commands/reconcile.ts, loaded only when it runs). */
export async function reconcileAction(options: ReconcileOptions, command: Command): Promise<void> {
  const from = options.from === undefined ? undefined : backfillBound('--from', options.from);
  const to = options.to === undefined ? undefined : backfillBound('--to', options.to);
  if (from && to && from >= to) throw new UsageError(`--from (${from}) must be before --to (${to})`);
  const maxRequests = positiveInteger('--max-requests', options.maxRequests);
  const runtime = await prepareCommand(command);
  const { config } = runtime.loaded;
  const days = positiveInteger('--days', options.days) ?? config.reconcile.days;
  if (options.stream) assertReconcileStreams(options.stream);
  const streams = options.stream ?? reconcilableStreams(config);
  if (streams.length === 0) throw new UsageError(`nothing to reconcile: none of ${config.reconcile.streams.join(', ')} is enabled under sync.streams`);
  const shutdown = installShutdown({ graceMs: 5_000, onStop: (signal) => runtime.logger.warn(`${signal}: stopping the reconcile`) });
  try {
    const report = await withApp(runtime, { withConnectors: true, streams, withSources: false, signal: shutdown.abortSignal }, (app) =>
      reconcileApp(app, { from, to, days, maxRequests, repair: options.repair === true, signal: shutdown.abortSignal }),
    );
    if (options.report) await writeFile(path.resolve(options.report), reportCsv(report), 'utf8');
    process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report));
    process.exitCode = succeeded(report) ? EXIT_OK : EXIT_WORK_FAILED;
  } finally {
    shutdown.dispose();
  }
}

function succeeded(report: ReconcileReport): boolean {
  if (!report.repair) return reportIsClean(report);
  return report.coverage.every((c) => c.complete) && report.results.every((r) => r.unchecked.length === 0 && (r.repair?.notRepaired.length ?? 0) === 0);
}

export function renderReport(report: ReconcileReport): string {
  const out: string[] = [`period ${report.from} → ${report.to}; ${report.requests} of ${report.maxRequests} API requests${report.repair ? '; repair on' : '; read-only'}\n\n`];
  out.push(
    renderTable(
      ['stream', 'sink', 'api', 'sink rows', 'matching', 'missing', 'stale', 'extra', 'unchecked', 'repaired'],
      report.results.map((r) => [
        r.stream,
        r.sink,
        r.apiRecords,
        r.sinkRows,
        r.matching,
        countOf(r, 'missing'),
        countOf(r, 'stale'),
        countOf(r, 'extra'),
        r.unchecked.length,
        r.repair ? `${r.repair.delivered + r.repair.tombstones}${r.repair.notRepaired.length > 0 ? ` (${r.repair.notRepaired.length} not)` : ''}` : '-',
      ]),
    ),
  );
  const differences = report.results.flatMap((r) => r.differences.map((d) => [d.kind, r.stream, r.sink, d.key, d.detail.slice(0, 100)]));
  if (differences.length > 0) {
    out.push(`\ndifferences${differences.length > TABLE_DIFFERENCES ? ` (first ${TABLE_DIFFERENCES} of ${differences.length}; all in --json / --report)` : ''}:\n`);
    out.push(renderTable(['kind', 'stream', 'sink', 'key', 'detail'], differences.slice(0, TABLE_DIFFERENCES)));
  }
  const statuses = report.results.flatMap((r) => r.statuses.map((s) => [r.stream, r.sink, s.status, s.api, s.sink]));
  if (statuses.length > 0) out.push(`\nrecords in the period by status:\n${renderTable(['stream', 'sink', 'status', 'api', 'sink'], statuses)}`);
  const totals = report.results.flatMap((r) =>
    (r.invoiceTotals ?? []).filter((t) => t.apiTotal !== t.sinkTotal || t.apiPaid !== t.sinkPaid || t.apiInvoices !== t.sinkInvoices).map((t) => [r.sink, t.month, t.customer, t.apiTotal, t.sinkTotal, t.apiPaid, t.sinkPaid]),
  );
  const groups = report.results.reduce((n, r) => n + (r.invoiceTotals?.length ?? 0), 0);
  if (groups > 0) {
    out.push(`\ninvoice totals per customer and month: ${groups} group(s), ${totals.length} differing${totals.length > 0 ? ':' : ''}\n`);
    if (totals.length > 0) out.push(renderTable(['sink', 'month', 'customer', 'api total', 'sink total', 'api paid', 'sink paid'], totals));
  }
  for (const c of report.coverage.filter((x) => !x.complete || x.apiRejected > 0)) {
    out.push(`\n${c.stream}: ${c.complete ? 'complete' : 'NOT fully checked'}${c.apiRejected > 0 ? `; ${c.apiRejected} API element(s) failed the schema (see rejected_records)` : ''}\n`);
    for (const note of c.notChecked) out.push(`  - ${note}\n`);
  }
  return out.join('');
}
