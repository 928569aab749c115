import type { PushSummary } from '../outbound/run-push.js';
import { renderTable } from './table.js';

/** The summary table of `push` (and of `sync --push`). */
export function renderPushSummary(s: PushSummary): string {
  const rows: Array<[string, number | string]> = [
    ['units taken', s.units],
    ['  of which already stored (retaken)', s.unitsAlreadyKnown],
    ['requests read', s.requests],
    ['new commands', s.commands],
    ['duplicates (same key and content)', s.duplicates],
    ['rejected at intake', s.invalid],
    ['sent and looked up (steps)', s.steps],
    ['done', s.done],
    ['  settled by look-up after an ambiguous outcome', s.reconciled],
    ['dead', s.dead],
    ['still waiting (retry later)', s.waiting],
    ['units written back', s.unitsWrittenBack],
    ['time', `${(s.durationMs / 1000).toFixed(1)}s`],
  ];
  let out = renderTable(['push', 'count'], rows);
  out += `\noutbox: ${Object.entries(s.outbox).map(([state, n]) => `${state} ${n}`).join(', ') || 'empty'}\n`;
  for (const error of s.sourceErrors) out += `source failed: ${error}\n`;
  return out;
}

/** A push failed when a request was rejected, a command went dead or a source could not be read (exit 1). */
export function pushFailed(summary: PushSummary): boolean {
  return summary.invalid > 0 || summary.dead > 0 || summary.sourceErrors.length > 0;
}
