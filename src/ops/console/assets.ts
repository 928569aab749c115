/**
 * The console's one stylesheet, served from memory at /console/assets/console.css: the CSP
 * (`default-src 'self'`) forbids inline styles, and a constant needs no copying into dist/.
 */
export const CONSOLE_CSS = `
:root { --fg: #1d232a; --muted: #5f6b77; --line: #d8dee4; --bg: #f6f8fa; --good: #1a7f37; --bad: #cf222e; --busy: #9a6700; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff; }
header { display: flex; gap: 24px; align-items: center; padding: 10px 20px; background: var(--fg); color: #fff; }
header nav a { color: #d0d7de; margin-right: 16px; text-decoration: none; }
header nav a[aria-current="page"], header nav a:hover { color: #fff; text-decoration: underline; }
main { padding: 12px 20px 24px; max-width: 1400px; }
h1 { font-size: 20px; margin: 8px 0 12px; }
h2 { font-size: 16px; margin: 20px 0 8px; }
table { border-collapse: collapse; width: 100%; margin-bottom: 12px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.error { color: var(--bad); max-width: 520px; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; border: 1px solid var(--line); }
.badge.good { color: var(--good); border-color: var(--good); }
.badge.bad { color: var(--bad); border-color: var(--bad); }
.badge.busy { color: var(--busy); border-color: var(--busy); }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 150px; }
.card .value { font-size: 22px; font-weight: 600; }
.card.alert .value { color: var(--bad); }
.flash { padding: 8px 12px; border-radius: 6px; border: 1px solid; }
.flash.ok { color: var(--good); background: #dafbe1; }
.flash.error { color: var(--bad); background: #ffebe9; }
form.inline { display: inline; margin: 0 4px 0 0; }
button { font: inherit; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); cursor: pointer; }
button.danger { color: var(--bad); }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.empty, footer { color: var(--muted); }
footer { padding: 8px 20px; border-top: 1px solid var(--line); }
svg.chart { width: 100%; max-width: 900px; height: auto; display: block; margin-bottom: 12px; }
svg.chart .plot { fill: var(--bg); stroke: var(--line); }
svg.chart .grid { stroke: var(--line); }
svg.chart .tick { fill: var(--muted); font-size: 10px; }
svg.chart .line { fill: none; stroke: var(--accent); stroke-width: 1.5; }
svg.chart .dot { fill: var(--accent); }
svg.chart .bar { fill: var(--good); opacity: 0.8; }
code { font-size: 12px; }
`;

/** A small icon, so browsers do not ask for /favicon.ico (a 404 in every page's console). */
export const CONSOLE_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d232a"/><path d="M3 11h10M3 8h7M3 5h4" stroke="#fff" stroke-width="1.6"/></svg>`;

/** Static files under /console/assets/: path → content type and body. */
export const CONSOLE_ASSETS: ReadonlyMap<string, { type: string; body: string }> = new Map([
  ['/console/assets/console.css', { type: 'text/css; charset=utf-8', body: CONSOLE_CSS }],
  ['/console/assets/icon.svg', { type: 'image/svg+xml', body: CONSOLE_ICON }],
]);
