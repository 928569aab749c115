import type { ConsoleRun } from './console-data.js';
import { formatCount, formatSeconds } from './format.js';
import { html, type SafeHtml } from './html.js';

/**
 * Server-rendered inline SVG charts of a stream's last days: no script, no library, nothing
 * fetched. Colours come from the stylesheet (classes), so the CSP needs no inline styles.
 */

const WIDTH = 720;
const HEIGHT = 180;
const PAD = { left: 64, right: 12, top: 12, bottom: 28 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;

interface Span {
  from: number;
  to: number;
}

function x(span: Span, ms: number): number {
  return PAD.left + ((ms - span.from) / Math.max(1, span.to - span.from)) * PLOT_W;
}

function y(value: number, max: number): number {
  return PAD.top + PLOT_H - (value / Math.max(1, max)) * PLOT_H;
}

function round(n: number): string {
  return n.toFixed(1);
}

/** Day boundaries (UTC midnight) as x-axis ticks with their date. */
function dayTicks(span: Span): SafeHtml[] {
  const ticks: SafeHtml[] = [];
  const day = 86_400_000;
  for (let t = Math.ceil(span.from / day) * day; t <= span.to; t += day) {
    const at = round(x(span, t));
    ticks.push(html`<line class="grid" x1="${at}" x2="${at}" y1="${PAD.top}" y2="${PAD.top + PLOT_H}"/><text class="tick" x="${at}" y="${HEIGHT - 8}" text-anchor="middle">${new Date(t).toISOString().slice(5, 10)}</text>`);
  }
  return ticks;
}

function frame(title: string, maxLabel: string, body: SafeHtml | SafeHtml[], span: Span): SafeHtml {
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}" xmlns="http://www.w3.org/2000/svg">
<title>${title}</title>
<rect class="plot" x="${PAD.left}" y="${PAD.top}" width="${PLOT_W}" height="${PLOT_H}"/>
${dayTicks(span)}
<text class="tick" x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end">${maxLabel}</text>
<text class="tick" x="${PAD.left - 6}" y="${PAD.top + PLOT_H}" text-anchor="end">0</text>
${body}
</svg>`;
}

function spanOf(now: Date, days: number): Span {
  return { from: now.getTime() - days * 86_400_000, to: now.getTime() };
}

/** Checkpoint lag at the end of each run, as a line with a dot per run. */
export function lagChart(runs: readonly ConsoleRun[], now: Date, days: number): SafeHtml {
  const span = spanOf(now, days);
  const points = runs
    .filter((r) => r.lagSeconds !== null && r.finishedAt !== null)
    .map((r) => ({ at: Date.parse(r.finishedAt!), lag: r.lagSeconds! }))
    .filter((p) => p.at >= span.from)
    .sort((a, b) => a.at - b.at);
  if (points.length === 0) return html`<p class="empty">No lag recorded in the last ${days} days (runs record it from this version on).</p>`;
  const max = Math.max(...points.map((p) => p.lag), 1);
  const line = points.map((p) => `${round(x(span, p.at))},${round(y(p.lag, max))}`).join(' ');
  const dots = points.map((p) => html`<circle class="dot" cx="${round(x(span, p.at))}" cy="${round(y(p.lag, max))}" r="2"><title>${new Date(p.at).toISOString()}: ${formatSeconds(p.lag)}</title></circle>`);
  return frame(`Checkpoint lag at the end of each run, last ${days} days`, formatSeconds(max), [html`<polyline class="line" points="${line}"/>`, ...dots], span);
}

/** Records delivered per bucket of hours (bars), summed over the runs that finished in it. */
export function throughputChart(runs: readonly ConsoleRun[], now: Date, days: number, bucketHours = 3): SafeHtml {
  const span = spanOf(now, days);
  const bucketMs = bucketHours * 3_600_000;
  const buckets = new Map<number, { records: number; requests: number }>();
  for (const run of runs) {
    const at = Date.parse(run.finishedAt ?? run.startedAt);
    if (Number.isNaN(at) || at < span.from) continue;
    const start = Math.floor(at / bucketMs) * bucketMs;
    const bucket = buckets.get(start) ?? { records: 0, requests: 0 };
    bucket.records += run.records;
    bucket.requests += run.requests;
    buckets.set(start, bucket);
  }
  if (buckets.size === 0) return html`<p class="empty">No runs in the last ${days} days.</p>`;
  const max = Math.max(...[...buckets.values()].map((b) => b.records), 1);
  const barWidth = Math.max(1, (bucketMs / (span.to - span.from)) * PLOT_W - 1);
  const bars = [...buckets].map(([start, b]) => {
    const left = Math.max(PAD.left, x(span, start));
    const top = y(b.records, max);
    const width = Math.max(1, Math.min(barWidth, PAD.left + PLOT_W - left));
    return html`<rect class="bar" x="${round(left)}" y="${round(top)}" width="${round(width)}" height="${round(PAD.top + PLOT_H - top)}"><title>${new Date(start).toISOString().slice(0, 16)}Z +${bucketHours} h: ${formatCount(b.records)} records, ${formatCount(b.requests)} requests</title></rect>`;
  });
  return frame(`Records delivered per ${bucketHours} hours, last ${days} days`, formatCount(max), bars, span);
}
