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

const KINDS: readonly QuarantineKind[] = ['api-schema', 'sink', 'webhook'];

function parseId(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id <= 0) throw new UsageError(`ID: expected a quarantine id such as 17 (see freight-sync rejected list), got "${text}"`);
  return id;
}

function parseKinds(kinds: readonly string[] | undefined): QuarantineKind[] | undefined {
  for (const kind of kinds ?? []) {
    if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind: "${kind}" is not one of ${KINDS.join(', ')}`);
  }
  return kinds as QuarantineKind[] | undefined;
}

interface Selection {
  all?: boolean;
  stream?: string;
  kind?: string[];
}

/** The entries `retry`/`discard` act on: ids, or `--all`, or a `--stream`/`--kind` filter. Never nothing by accident. */
async function selectRows(app: AppContext, idTexts: readonly string[], options: Selection): Promise<QuarantineRow[]> {
  const ids = idTexts.map(parseId);
  const kinds = parseKinds(options.kind);
  if (ids.length === 0 && !options.all && !options.stream && !kinds) throw new UsageError('name the entries: IDs, --stream <name>, --kind <kind> or --all');
  if (ids.length > 0 && options.all) throw new UsageError('give either IDs or --all, not both');
  const rows = await app.stores.quarantine.list({ ids: ids.length > 0 ? ids : undefined, stream: options.stream, kinds });
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

/**
 * `freight-sync rejected list|show|retry|discard`: the one quarantine — records the API schema
 * refused, records a sink refused, webhook events parked as failed — in one vocabulary.
 */
export function register(program: Command): void {
  const rejected = program
    .command('rejected')
    .description('Inspect, re-deliver or discard what did not land: records the API schema or a sink refused, failed webhook events.');

  rejected
    .command('list')
    .description('List quarantined entries, oldest first.')
    .option('-s, --stream <name>', 'only this stream (webhook events: webhook:<family>)')
    .option('--kind <kind...>', `only these kinds (${KINDS.join(', ')})`)
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print as JSON')
    .action(async (options: { stream?: string; kind?: string[]; limit: string; json?: boolean }, command: Command) => {
      const kinds = parseKinds(options.kind);
      const limit = Number(options.limit);
      if (!Number.isSafeInteger(limit) || limit <= 0) throw new UsageError(`--limit: expected a positive number, got "${options.limit}"`);
      const runtime = await prepareCommand(command);
      await withApp(runtime, { withConnectors: false }, async (app) => {
        const entries = (await app.stores.quarantine.list({ stream: options.stream, kinds, limit })).map((r) => toEntry(r));
        if (options.json) return void process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
        process.stdout.write(
          renderTable(
            ['id', 'kind', 'stream', 'key', 'sink', 'attempts', 'first seen', 'last seen', 'next attempt', 'reason'],
            entries.map((e) => [e.id, e.kind, e.stream, e.key, e.sink ?? '', e.attempts, e.firstSeenAt, e.lastSeenAt, e.nextAttemptAt ?? '-', e.reason.slice(0, 100)]),
          ),
        );
      });
    });

  rejected
    .command('show <id>')
    .description('Show one entry in full, with the record (or webhook body) as it was received.')
    .option('--json', 'print as JSON')
    .action(async (idText: string, options: { json?: boolean }, command: Command) => {
      const id = parseId(idText);
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
    });

  rejected
    .command('retry [ids...]')
    .description('Re-deliver now: a sink refusal to the sink that refused it, a failed webhook event through the inbox. Reports what landed.')
    .option('--all', 'every entry')
    .option('-s, --stream <name>', 'the entries of this stream')
    .option('--kind <kind...>', `the entries of these kinds (${KINDS.join(', ')})`)
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', '\nExit code 1 when any entry did not land (it stays quarantined). Records the API schema refused cannot be retried: the API must send a valid version.')
    .action(async (idTexts: string[], options: Selection & { json?: boolean }, command: Command) => {
      const runtime = await prepareCommand(command);
      const shutdown = installShutdown({ graceMs: 10_000 });
      try {
        // First read what to retry (no connectors needed), then open the connectors it needs.
        const rows = await withApp(runtime, { withConnectors: false }, (app) => selectRows(app, idTexts, options));
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
    });

  rejected
    .command('discard [ids...]')
    .description('Forget entries for good: they are not re-delivered (a newer version from the API still is).')
    .option('--all', 'every entry')
    .option('-s, --stream <name>', 'the entries of this stream')
    .option('--kind <kind...>', `the entries of these kinds (${KINDS.join(', ')})`)
    .option('--json', 'print the outcome as JSON')
    .action(async (idTexts: string[], options: Selection & { json?: boolean }, command: Command) => {
      const runtime = await prepareCommand(command);
      await withApp(runtime, { withConnectors: false }, async (app) => {
        const rows = await selectRows(app, idTexts, options);
        const discarded = await discardRejected(app, rows);
        if (options.json) return void process.stdout.write(`${JSON.stringify({ discarded, ids: rows.map((r) => r.id) })}\n`);
        process.stdout.write(`discarded ${discarded} entr${discarded === 1 ? 'y' : 'ies'}${rows.length > 0 ? `: ${rows.map((r) => `#${r.id}`).join(', ')}` : ''}\n`);
      });
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
