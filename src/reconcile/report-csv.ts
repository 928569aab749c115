import { stringify } from 'csv-stringify/sync';
import type { ReconcileReport } from './report.js';

const COLUMNS = [
  'section',
  'stream',
  'sink',
  'kind',
  'key',
  'detail',
  'api_updated_at',
  'sink_updated_at',
  'status',
  'customer',
  'month',
  'api_count',
  'sink_count',
  'api_total',
  'sink_total',
  'api_paid',
  'sink_paid',
] as const;

type ReportRow = Partial<Record<(typeof COLUMNS)[number], string | number | null>>;

/**
 * The CSV report of a reconcile (`--report`): one row per difference (`difference`), unchecked
 * key (`unchecked`), status count (`status`), invoice total per customer and month
 * (`invoice_total`) and coverage note (`coverage`), all under one header so a spreadsheet can
 * filter by `section`. Every field is quoted (RFC 4180) and text that a spreadsheet would run as
 * a formula is prefixed with `'`.
 */
export function reportCsv(report: ReconcileReport): string {
  const rows: ReportRow[] = [];
  for (const c of report.coverage) {
    rows.push({ section: 'coverage', stream: c.stream, kind: c.complete ? 'complete' : 'partial', detail: [`listed through ${c.listedThrough ?? '-'}`, ...c.notChecked].join('; '), api_count: c.apiRejected });
  }
  for (const r of report.results) {
    const where = { stream: r.stream, sink: r.sink };
    for (const d of r.differences) rows.push({ section: 'difference', ...where, kind: d.kind, key: d.key, detail: d.detail, api_updated_at: d.apiUpdatedAt, sink_updated_at: d.sinkUpdatedAt });
    for (const u of r.unchecked) rows.push({ section: 'unchecked', ...where, key: u.key, detail: u.reason });
    for (const s of r.statuses) rows.push({ section: 'status', ...where, status: s.status, api_count: s.api, sink_count: s.sink });
    for (const t of r.invoiceTotals ?? []) {
      rows.push({
        section: 'invoice_total',
        ...where,
        customer: t.customer,
        month: t.month,
        api_count: t.apiInvoices,
        sink_count: t.sinkInvoices,
        api_total: t.apiTotal,
        sink_total: t.sinkTotal,
        api_paid: t.apiPaid,
        sink_paid: t.sinkPaid,
      });
    }
    for (const n of r.repair?.notRepaired ?? []) rows.push({ section: 'not_repaired', ...where, key: n.key, detail: n.reason });
  }
  return stringify(
    rows.map((row) => COLUMNS.map((column) => neutralise(row[column]))),
    { header: true, columns: [...COLUMNS], quoted: true, record_delimiter: 'windows' },
  );
}

/** Amounts keep their sign; only text that is not a number is protected. */
function neutralise(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /^[=+\-@\t\r]/.test(text) && Number.isNaN(Number(text)) ? `'${text}` : text;
}
