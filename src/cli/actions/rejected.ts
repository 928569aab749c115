import type { Command } from 'commander';
import { discardRejected, retryRejected, toEntry, type RetryReport } from '../../app/rejected-admin.js';
import { installShutdown } from '../../app/shutdown.js';
import type { AppContext } from '../../app/compose.js';
import type { QuarantineRow } from '../../state/stores/quarantine-store.js';
import type { QuarantineKind } from '../../state/tables.js';
import { UsageError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand, withApp, type CommandRuntime } from '../runtime.js';
import { renderTable } from '../table.js';

/** What `retry`/`discard` act on, as parsed by commands/rejected.ts: ids, or `--all`, or a `--stream`/`--kind` filter. */
export interface RejectedSelection {
  ids: number[];
  all?: boolean;
  stream?: string;
  kinds?: QuarantineKind[];
}

/** The selected entries. Never nothing by accident. */
async function selectRows(app: AppContext, selection: RejectedSelection): Promise<QuarantineRow[]> {
  const { ids, kinds } = selection;
  if (ids.length === 0 && !selection.all && !selection.stream && !kinds) throw new UsageError('name the entries: IDs, --stream <name>, --kind <kind> or --all');
  if (ids.length > 0 && selection.all) throw new UsageError('give either IDs or --all, not both');
  const rows = await app.stores.quarantine.list({ ids: ids.length > 0 ? ids : undefined, stream: selection.stream, kinds });
  const missing = ids.filter((id) => !rows.some((r) => r.id === id));
  if (missing.length > 0) throw new UsageError(`no quarantine entry ${missing.map((id) => `#${id}`).join(', ')} (see freight-sync rejected list)`);
  return rows;
}

/** Streams whose connectors a retry must open: the sink refusals' streams; every stream for webhook events. */
function streamsToOpen(runtime: CommandRuntime, rows: readonly QuarantineRow[]): string[] | undefined {
  if (rows.some((r) => r.kind === 'webhook')) return undefined;
  const configured = runtime.loaded.config.sync.streams as Record<string, { enabled: boolean } | undefined>;
  return [...new Set(rows.filter((r) => r.kind === 'sink').map((r) => r.stream))].filter((s) => configured[s]?.enabled);
}

/** `rejected list`. */
export async function rejectedListAction(options: { stream?: string; kinds?: QuarantineKind[]; limit: number; json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  await withApp(runtime, { withConnectors: false }, async (app) => {
    const entries = (await app.stores.quarantine.list({ stream: options.stream, kinds: options.kinds, limit: options.limit })).map((r) => toEntry(r));
    if (options.json) return void process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    process.stdout.write(
      renderTable(
        ['id', 'kind', 'stream', 'key', 'sink', 'attempts', 'first seen', 'last seen', 'next attempt', 'reason'],
        entries.map((e) => [e.id, e.kind, e.stream, e.key, e.sink ?? '', e.attempts, e.firstSeenAt, e.lastSeenAt, e.nextAttemptAt ?? '-', e.reason.slice(0, 100)]),
      ),
    );
  });
}

/** `rejected show <id>`. */
export async function rejectedShowAction(id: number, options: { json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  await withApp(runtime, { withConnectors: false }, async (app) => {
    const row = await app.stores.quarantine.get(id);
    if (!row) throw new UsageError(`no quarantine entry #${id} (see freight-sync rejected list)`);
    const entry = toEntry(row, true);
    if (options.json) return void process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    const { raw, ...fields } = entry;
    for (const [name, value] of Object.entries(fields)) process.stdout.write(`${name.padEnd(14)}${value ?? '-'}\n`);
    process.stdout.write(`raw\n${JSON.stringify(raw, null, 2)}\n`);
  });
}

/** `rejected retry [ids...]`. */
export async function rejectedRetryAction(selection: RejectedSelection, options: { json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  const shutdown = installShutdown({ graceMs: 10_000 });
  try {
    // First read what to retry (no connectors needed), then open the connectors it needs.
    const rows = await withApp(runtime, { withConnectors: false }, (app) => selectRows(app, selection));
    const reports = rows.length === 0
      ? []
      : await withApp(runtime, { withConnectors: true, streams: streamsToOpen(runtime, rows), withSources: false, signal: shutdown.abortSignal }, (app) =>
          retryRejected(app, rows, shutdown.abortSignal),
        );
    process.stdout.write(options.json ? `${JSON.stringify(reports, null, 2)}\n` : renderRetry(reports));
    process.exitCode = reports.every((r) => r.result === 'delivered') ? EXIT_OK : EXIT_WORK_FAILED;
  } finally {
    shutdown.dispose();
  }
}

/** `rejected discard [ids...]`. */
export async function rejectedDiscardAction(selection: RejectedSelection, options: { json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  await withApp(runtime, { withConnectors: false }, async (app) => {
    const rows = await selectRows(app, selection);
    const discarded = await discardRejected(app, rows);
    if (options.json) return void process.stdout.write(`${JSON.stringify({ discarded, ids: rows.map((r) => r.id) })}\n`);
    process.stdout.write(`discarded ${discarded} entr${discarded === 1 ? 'y' : 'ies'}${rows.length > 0 ? `: ${rows.map((r) => `#${r.id}`).join(', ')}` : ''}\n`);
  });
}

function renderRetry(reports: readonly RetryReport[]): string {
  if (reports.length === 0) return 'nothing to retry\n';
  const delivered = reports.filter((r) => r.result === 'delivered').length;
  const table = renderTable(
    ['id', 'kind', 'stream', 'key', 'sink', 'result', 'reason'],
    reports.map((r) => [r.id, r.kind, r.stream, r.key, r.sink ?? '', r.result, (r.reason ?? '').slice(0, 100)]),
  );
  return `${table}\n${delivered} of ${reports.length} delivered; the rest stays quarantined\n`;
}
