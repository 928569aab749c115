import type { DryRunResult, InboundResult } from '../../src/contracts/index.js';
import { encodeCsv } from '../file-drop/encode-csv.js';

export const RESULT_SUFFIX = '.result.csv';
export const ERRORS_SUFFIX = '.errors.txt';
export const RESULT_COLUMNS = ['ref', 'status', 'reference_number', 'load_id', 'error', 'outbox_id', 'finished_at'] as const;
/** Ends with RESULT_SUFFIX too, so the inbox never reads it as a request file. */
export const DRY_RUN_SUFFIX = '.dry-run.result.csv';
export const DRY_RUN_COLUMNS = [...RESULT_COLUMNS, 'dry_run', 'outcome'] as const;

const CSV_FORMAT = { delimiter: ',', bom: false, lineEnding: 'crlf', quote: '"', quoted: 'auto', encoding: 'utf8', header: true } as const;

/** `<file>.result.csv`: one row per request, in ref order as given; UTF-8, CRLF, header. */
export function resultCsv(results: readonly InboundResult[]): Buffer {
  const rows = results.map((r) => ({
    ref: r.ref,
    status: r.status,
    reference_number: r.referenceNumber ?? null,
    load_id: r.loadId ?? null,
    error: r.error ?? null,
    outbox_id: r.outboxId ?? null,
    finished_at: r.finishedAt,
  }));
  return encodeCsv(RESULT_COLUMNS, rows, CSV_FORMAT);
}

/**
 * `<file>.dry-run.result.csv`: the result file's columns, with `status` `ok` (a push would accept
 * the request) or `failed`, `finished_at` the time of the dry run, `dry_run` always `true` and
 * `outcome` what a push would do (`would create load`, `already done (outbox #41)`, `error`).
 */
export function dryRunCsv(results: readonly DryRunResult[]): Buffer {
  const rows = results.map((r) => ({
    ref: r.ref,
    status: r.status,
    reference_number: r.referenceNumber ?? null,
    load_id: null,
    error: r.error ?? null,
    outbox_id: r.outboxId ?? null,
    finished_at: r.checkedAt,
    dry_run: 'true',
    outcome: r.outcome,
  }));
  return encodeCsv(DRY_RUN_COLUMNS, rows, CSV_FORMAT);
}

/** `<file>.errors.txt`: one line per failed request, for a human opening the failed folder. */
export function errorsReport(fileName: string, results: readonly InboundResult[]): Buffer {
  const failed = results.filter((r) => r.status === 'failed');
  const lines = [`${fileName}: ${failed.length} of ${results.length} request(s) failed`, ''];
  for (const r of failed) lines.push(`ref ${r.ref}: ${(r.error ?? 'failed (no error text)').replace(/\r?\n/g, ' ')}`);
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}
