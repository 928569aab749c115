import type { StreamRunSummary } from '../sync/stream-runner.js';
import { renderTable } from './table.js';

export function renderSyncSummary(summaries: readonly StreamRunSummary[]): string {
  const rows = summaries.map((s) => [
    s.stream,
    s.status,
    s.delivered,
    s.upserts,
    s.deletes,
    s.unchanged,
    s.rejected,
    s.pages,
    s.requests,
    `${(s.durationMs / 1000).toFixed(1)}s`,
    s.error ? s.error.slice(0, 100) : '',
  ]);
  return renderTable(['stream', 'status', 'delivered', 'upserts', 'deletes', 'unchanged', 'rejected', 'pages', 'requests', 'time', 'error'], rows);
}
