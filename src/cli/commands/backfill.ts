import type { Command } from 'commander';
import { runPass } from '../../app/sync-pass.js';
import { installShutdown } from '../../app/shutdown.js';
import { UsageError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { createProgressReporter } from '../progress.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderSyncSummary } from '../sync-summary.js';

/** An ISO 8601 date or date-time flag value as ISO UTC (a date alone is midnight UTC). */
export function isoArgument(flag: string, value: string | undefined): string {
  if (!value) throw new UsageError(`${flag} is required (ISO 8601 date or datetime, e.g. 2025-01-01 or 2025-01-01T00:00:00Z)`);
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new UsageError(`${flag}: expected an ISO 8601 date or datetime, got "${value}"`);
  return new Date(ms).toISOString();
}

/**
 * `freight-sync backfill --from --to`: re-reads a time range into the sinks under its own cursor
 * (the streams' incremental checkpoints do not move). Resumable: the same command again continues
 * where it stopped. Memory stays constant: records flow page by page.
 */
export function register(program: Command): void {
  program
    .command('backfill')
    .description('Read a past time range of the enabled streams into the sinks; rerun the same command to resume.')
    .requiredOption('--from <date>', 'start of the range (ISO 8601, inclusive)')
    .requiredOption('--to <date>', 'end of the range (ISO 8601, inclusive; capped at the server clock minus the safety lag)')
    .option('-s, --stream <name...>', 'only these streams')
    .addHelpText('after', '\nDates select by updatedAt (loads, bills, support moves, customers), billing date (invoices) or createdAt (audits, events).\nA rerun with the same --from/--to resumes; a different range starts a new backfill.')
    .action(async (options: { from?: string; to?: string; stream?: string[] }, command: Command) => {
      const from = isoArgument('--from', options.from);
      const to = isoArgument('--to', options.to);
      if (from >= to) throw new UsageError(`--from (${from}) must be before --to (${to})`);
      const runtime = await prepareCommand(command);
      const shutdown = installShutdown({
        graceMs: 10_000,
        onStop: (signal) => runtime.logger.warn(`${signal}: finishing the current batch, then stopping; rerun the same command to resume`),
      });
      const progress = createProgressReporter({ from, to }, runtime.logger);
      try {
        const summaries = await withApp(runtime, { withConnectors: true, streams: options.stream, signal: shutdown.abortSignal }, (app) =>
          runPass(app, { command: 'backfill', backfill: { from, to }, signal: shutdown.abortSignal, stopSignal: shutdown.stopSignal, onProgress: progress.onProgress }),
        );
        progress.stop();
        process.stdout.write(renderSyncSummary(summaries));
        process.exitCode = summaries.every((s) => s.status === 'ok') ? EXIT_OK : EXIT_WORK_FAILED;
      } finally {
        progress.stop();
        shutdown.dispose();
      }
    });
}
