import type { ConsoleOutbox, ConsoleOutboxEntry, ConsoleRejectedEntry, ConsoleWebhooks } from './console-data.js';
import { formatCount, formatTime } from './format.js';
import { html, type SafeHtml } from './html.js';
import { actionForm, layout, statusBadge, type PageContext } from './layout.js';

const OPEN_STATES = new Set(['pending', 'retry', 'reconciling', 'dead']);

function outboxTable(entries: readonly ConsoleOutboxEntry[], ctx: PageContext, id: string): SafeHtml {
  if (entries.length === 0) return html`<p class="empty">None.</p>`;
  const rows = entries.map(
    (e) => html`<tr data-outbox="${e.id}" data-state="${e.state}">
<td class="num">${e.id}</td><td>${e.kind}</td><td>${e.erpKey}</td><td>${statusBadge(e.state)}</td><td class="num">${e.attempts}</td>
<td>${e.referenceNumber ?? ''}</td><td>${e.origin}</td><td>${formatTime(e.updatedAt)}</td><td class="error">${e.error ?? ''}</td>
<td>${OPEN_STATES.has(e.state) || e.state === 'cancelled' ? actionForm(ctx, 'outbox-retry', e.id, 'Retry') : ''}${OPEN_STATES.has(e.state) ? actionForm(ctx, 'outbox-cancel', e.id, 'Cancel', 'danger') : ''}</td>
</tr>`,
  );
  return html`<table id="${id}">
<thead><tr><th class="num">#</th><th>Kind</th><th>ERP key</th><th>State</th><th class="num">Attempts</th><th>Load</th><th>Origin</th><th>Updated</th><th>Last error</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/** `/console/outbox`: dead letters with retry / cancel (the `freight-sync outbox` actions), then the newest commands. */
export function outboxPage(outbox: ConsoleOutbox, ctx: PageContext, generatedAt: string): SafeHtml {
  const counts = Object.entries(outbox.counts);
  const body = html`<p>${counts.length === 0 ? 'No outbound commands yet.' : counts.map(([state, n]) => `${state}: ${formatCount(n)}`).join(' · ')}</p>
<p class="empty">Retry makes a command due now with fresh attempts (a create that was sent before is looked up first, so it is never duplicated); cancel gives it up and writes it back as failed.</p>
<h2>Dead letters</h2>
${outboxTable(outbox.deadLetters, ctx, 'dead-letters')}
<h2>Newest commands</h2>
${outboxTable(outbox.recent, ctx, 'commands')}`;
  return layout('Outbox', ctx, body, formatTime(generatedAt));
}

export function rejectedTable(entries: readonly ConsoleRejectedEntry[], ctx: PageContext): SafeHtml {
  if (entries.length === 0) return html`<p class="empty">Nothing is quarantined.</p>`;
  const rows = entries.map(
    (e) => html`<tr data-rejected="${e.id}">
<td class="num">${e.id}</td><td>${e.kind}</td><td>${e.stream}</td><td>${e.key}</td><td>${e.sink ?? ''}</td><td class="num">${e.attempts}</td>
<td>${formatTime(e.firstSeenAt)}</td><td>${formatTime(e.lastSeenAt)}</td><td>${formatTime(e.nextAttemptAt)}</td><td class="error">${e.reason}</td>
<td>${e.kind === 'api-schema' ? '' : actionForm(ctx, 'rejected-retry', e.id, 'Retry')}${actionForm(ctx, 'rejected-discard', e.id, 'Discard', 'danger')}</td>
</tr>`,
  );
  return html`<table class="rejected">
<thead><tr><th class="num">#</th><th>Kind</th><th>Stream</th><th>Key</th><th>Sink</th><th class="num">Attempts</th><th>First seen</th><th>Last seen</th><th>Next attempt</th><th>Reason</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/** `/console/rejected`: the quarantine (the `freight-sync rejected` actions). */
export function rejectedPage(entries: readonly ConsoleRejectedEntry[], ctx: PageContext, generatedAt: string): SafeHtml {
  const body = html`<p class="empty">Records the API schema refused (<code>api-schema</code>: discard once handled; a valid version from the API replaces them), records a sink refused (<code>sink</code>: retried automatically, or now), and webhook events parked after their last attempt (<code>webhook</code>).</p>
${rejectedTable(entries, ctx)}`;
  return layout('Rejected records and events', ctx, body, formatTime(generatedAt));
}

/** `/console/webhooks`: receipts per family, the inbox by state, and the failed events. */
export function webhooksPage(view: ConsoleWebhooks, ctx: PageContext, generatedAt: string): SafeHtml {
  const receipts =
    view.receipts.length === 0
      ? html`<p class="empty">No webhook events received in the last 7 days.</p>`
      : html`<table id="receipts"><thead><tr><th>Family</th><th>Source</th><th class="num">Last 24 h</th><th class="num">Last 7 days</th></tr></thead><tbody>${view.receipts.map(
          (r) => html`<tr><td>${r.family}</td><td>${r.source === 'log' ? 'event log (catch-up)' : 'delivery'}</td><td class="num">${formatCount(r.last24h)}</td><td class="num">${formatCount(r.last7d)}</td></tr>`,
        )}</tbody></table>`;
  const body = html`<p>${view.enabled ? 'The webhook receiver is enabled.' : 'The webhook receiver is not enabled in this config.'} Newest event: ${formatTime(view.lastEventAt)}.</p>
<p>Inbox: ${Object.entries(view.byState).map(([state, n]) => `${state} ${formatCount(n)}`).join(' · ')}</p>
<h2>Receipts</h2>
${receipts}
<h2>Failed events</h2>
${rejectedTable(view.failed, ctx)}`;
  return layout('Webhooks', ctx, body, formatTime(generatedAt));
}
