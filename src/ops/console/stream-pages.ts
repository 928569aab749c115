import { lagChart, throughputChart } from './charts.js';
import type { ConsoleOverview, ConsoleRun, ConsoleStream, ConsoleStreamDetail } from './console-data.js';
import { formatCount, formatSeconds, formatTime } from './format.js';
import { html, pathSegment, type SafeHtml } from './html.js';
import { layout, statusBadge, type PageContext } from './layout.js';

function streamState(s: ConsoleStream): SafeHtml {
  if (!s.enabled) return statusBadge('disabled');
  if (s.running) return statusBadge('running');
  return statusBadge(s.lastRun?.status ?? 'never run');
}

function card(label: string, value: number, href: string): SafeHtml {
  return html`<a class="card${value > 0 ? ' alert' : ''}" href="${href}"><div class="value">${formatCount(value)}</div><div>${label}</div></a>`;
}

/** `/console/`: every stream of the config with where it stands. */
export function overviewPage(data: ConsoleOverview, ctx: PageContext): SafeHtml {
  const rows = data.streams.map(
    (s) => html`<tr data-stream="${s.stream}">
<td><a href="/console/streams/${pathSegment(s.stream)}">${s.stream}</a></td>
<td>${streamState(s)}</td>
<td>${formatTime(s.checkpoint)}${s.inProgress ? ' (range in progress)' : ''}</td>
<td class="num">${formatSeconds(s.lagSeconds)}</td>
<td>${formatTime(s.lastRun?.startedAt)}</td>
<td class="num">${s.lastRun ? formatCount(s.lastRun.records) : '—'}</td>
<td class="num">${s.lastRun ? formatCount(s.lastRun.requests) : '—'}</td>
<td>${formatTime(s.nextRunAt)}</td>
<td class="num">${formatCount(s.recordsKnown)}</td>
<td class="num">${s.rejected > 0 ? html`<a href="/console/rejected">${formatCount(s.rejected)}</a>` : '0'}</td>
<td class="error">${s.lastRun?.error ?? ''}</td>
</tr>`,
  );
  const body = html`<div class="cards">
${card('dead letters in the outbox', data.outboxCounts['dead'] ?? 0, '/console/outbox')}
${card('rejected records', data.rejected, '/console/rejected')}
${card('failed webhook events', data.failedWebhookEvents, '/console/webhooks')}
</div>
<table id="streams">
<thead><tr><th>Stream</th><th>Status</th><th>Checkpoint</th><th class="num">Lag</th><th>Last run</th><th class="num">Records</th><th class="num">Requests</th><th>Next run</th><th class="num">Known keys</th><th class="num">Rejected</th><th>Last error</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
  return layout('Streams', ctx, body, formatTime(data.generatedAt));
}

export function runsTable(runs: readonly ConsoleRun[], withStream: boolean): SafeHtml {
  if (runs.length === 0) return html`<p class="empty">No runs recorded.</p>`;
  const rows = runs.map(
    (r) => html`<tr data-run="${r.id}">
<td class="num">${r.id}</td>
${withStream ? html`<td><a href="/console/streams/${pathSegment(r.stream)}">${r.stream}</a></td>` : ''}
<td>${r.command}</td>
<td>${formatTime(r.startedAt)}</td>
<td>${formatTime(r.finishedAt)}</td>
<td>${statusBadge(r.status)}</td>
<td class="num">${formatCount(r.records)}</td>
<td class="num">${formatCount(r.rejected)}</td>
<td class="num">${formatCount(r.requests)}</td>
<td class="num">${formatSeconds(r.lagSeconds)}</td>
<td class="error">${r.error ?? ''}</td>
</tr>`,
  );
  return html`<table class="runs">
<thead><tr><th class="num">Run</th>${withStream ? html`<th>Stream</th>` : ''}<th>Command</th><th>Started</th><th>Finished</th><th>Status</th><th class="num">Records</th><th class="num">Rejected</th><th class="num">Requests</th><th class="num">Lag after</th><th>Error</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/** `/console/streams/<stream>`: one stream, its charts over the last days and its recent runs. */
export function streamPage(detail: ConsoleStreamDetail, ctx: PageContext): SafeHtml {
  const s = detail.stream;
  const now = new Date(detail.generatedAt);
  const finished = detail.history.filter((r) => r.finishedAt !== null);
  const perRun = finished.length === 0 ? null : { records: sum(finished, 'records') / finished.length, requests: sum(finished, 'requests') / finished.length };
  const body = html`<dl class="facts">
<dt>Status</dt><dd>${streamState(s)}</dd>
<dt>Checkpoint</dt><dd>${formatTime(s.checkpoint)}${s.inProgress ? ' (a range is being read)' : ''}</dd>
<dt>Lag</dt><dd>${formatSeconds(s.lagSeconds)}</dd>
<dt>Late writes</dt><dd>${lateWriteCoverText(s.lateWriteCover)}</dd>
<dt>Last run</dt><dd>${formatTime(s.lastRun?.startedAt)}${s.lastRun ? html` — ${statusBadge(s.lastRun.status)}, ${formatCount(s.lastRun.records)} records, ${formatCount(s.lastRun.requests)} requests` : ''}</dd>
<dt>Next run</dt><dd>${formatTime(s.nextRunAt)}</dd>
<dt>Per run (last ${detail.days} days)</dt><dd>${perRun ? `${formatCount(Math.round(perRun.records))} records, ${formatCount(Math.round(perRun.requests))} requests on average over ${finished.length} runs` : '—'}</dd>
<dt>Known keys</dt><dd>${formatCount(s.recordsKnown)}</dd>
<dt>Rejected</dt><dd>${s.rejected > 0 ? html`<a href="/console/rejected">${formatCount(s.rejected)}</a>` : '0'}</dd>
</dl>
<h2>Lag</h2>
${lagChart(detail.history, now, detail.days)}
<h2>Throughput</h2>
${throughputChart(detail.history, now, detail.days)}
<h2>Recent runs</h2>
${runsTable(detail.recentRuns, false)}`;
  return layout(`Stream ${s.stream}`, ctx, body, formatTime(detail.generatedAt));
}

/** Why a stream under the lag's cover lags more than the others (lateWriteCover, docs/configuration.md). */
function lateWriteCoverText(cover: ConsoleStream['lateWriteCover']): string {
  if (cover === 'lag') return 'covered by the safety lag: each record is read once, `lookback` later, so this lag is that much larger by design';
  if (cover === 'lookback') return 'covered by the lookback: each pass reads the last `lookback` again';
  return '— (not needed: a log by creation time, a snapshot or webhook push; invoices keep their own rules)';
}

function sum(runs: readonly ConsoleRun[], field: 'records' | 'requests'): number {
  return runs.reduce((n, r) => n + r[field], 0);
}

/** `/console/runs`: the newest runs of every stream, with their errors. */
export function runsPage(runs: readonly ConsoleRun[], failedOnly: boolean, ctx: PageContext, generatedAt: string): SafeHtml {
  const filter = failedOnly ? html`<p>Failed runs only. <a href="/console/runs">Show all</a></p>` : html`<p><a href="/console/runs?failed=1">Failed runs only</a></p>`;
  return layout('Recent runs', ctx, html`${filter}${runsTable(runs, true)}`, formatTime(generatedAt));
}
