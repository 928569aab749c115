import type { DryRunSummary } from '../outbound/dry-run.js';
import { renderTable } from './table.js';

/** Long errors stay readable in a terminal; `--json` and the result files carry them whole. */
function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `push --dry-run`: one line per request (what a push would do, or its error), then the totals. */
export function renderDryRun(s: DryRunSummary): string {
  const rows = s.results.map((r) => [
    r.source,
    r.location,
    r.ref,
    r.erpKey ?? '',
    r.kind ?? '',
    r.status === 'ok' ? r.outcome : `error ${clip((r.error ?? '').replace(/\r?\n/g, ' '))}`,
  ]);
  let out = rows.length > 0 ? renderTable(['source', 'unit', 'ref', 'erp_key', 'kind', 'a push would'], rows) : 'nothing to push\n';
  out += `\ndry run: ${s.units} unit(s), ${s.requests} request(s): ${s.ok} ok, ${s.failed} failed`;
  if (s.unitsAlreadyKnown > 0) out += `; ${s.unitsAlreadyKnown} unit(s) already taken by an earlier push`;
  out += `; results written beside ${s.unitsWrittenBack} unit(s). Nothing was sent, taken or stored.\n`;
  for (const error of s.sourceErrors) out += `source failed: ${error}\n`;
  return out;
}
