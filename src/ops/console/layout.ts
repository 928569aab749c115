import { html, type SafeHtml } from './html.js';

export const CONSOLE_PREFIX = '/console/';
export const STYLESHEET_PATH = '/console/assets/console.css';

const NAV: ReadonlyArray<readonly [string, string]> = [
  ['/console/', 'Streams'],
  ['/console/outbox', 'Outbox'],
  ['/console/rejected', 'Rejected'],
  ['/console/webhooks', 'Webhooks'],
  ['/console/runs', 'Runs'],
];

export interface PageContext {
  /** The form token of this session (every action form carries it). */
  csrfToken: string;
  /** The path the page was requested at (forms come back to it). */
  path: string;
  /** The outcome of the action that led here, if any. */
  flash?: { ok: boolean; message: string };
}

export function layout(title: string, ctx: PageContext, body: SafeHtml, generatedAt: string): SafeHtml {
  const nav = NAV.map(([href, label]) => html`<a href="${href}"${ctx.path === href ? html` aria-current="page"` : ''}>${label}</a>`);
  const flash = ctx.flash ? html`<p class="flash ${ctx.flash.ok ? 'ok' : 'error'}" role="status">${ctx.flash.message}</p>` : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · freight-sync</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">
</head>
<body>
<header><strong>freight-sync</strong><nav>${nav}</nav></header>
<main>
<h1>${title}</h1>
${flash}
${body}
</main>
<footer>Generated ${generatedAt}. <a href="${ctx.path}">Reload</a></footer>
</body>
</html>
`;
}

/** A POST form with one button: the only way the console changes anything. */
export function actionForm(ctx: PageContext, action: string, id: number, label: string, extraClass = ''): SafeHtml {
  return html`<form method="post" action="/console/actions/${action}" class="inline"><input type="hidden" name="id" value="${id}"><input type="hidden" name="csrf" value="${ctx.csrfToken}"><input type="hidden" name="back" value="${ctx.path}"><button type="submit" class="${extraClass}" data-action="${action}" data-id="${id}">${label}</button></form>`;
}

export function statusBadge(status: string): SafeHtml {
  const tone = status === 'ok' || status === 'done' ? 'good' : status === 'failed' || status === 'dead' ? 'bad' : status === 'running' || status === 'sending' ? 'busy' : 'neutral';
  return html`<span class="badge ${tone}">${status}</span>`;
}
