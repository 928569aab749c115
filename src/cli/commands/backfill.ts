import type { Command } from 'commander';
import type { AppContext } from '../../app/compose.js';
import { loadsDataRange } from '../../app/data-range.js';
import type { StreamRunSummary } from '../../sync/stream-runner.js';
import { runPass } from '../../app/sync-pass.js';
import { installShutdown } from '../../app/shutdown.js';
import { describeError, UsageError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { createProgressReporter } from '../progress.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderSyncSummary } from '../sync-summary.js';

/** ISO 8601 date or datetime; `now` for the current time (the engine caps it at the server clock minus the safety lag). */
export function backfillBound(flag: string, value: string, now: () => Date = () => new Date()): string {
  if (value.trim().toLowerCase() === 'now') return now().toISOString();
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new UsageError(`${flag}: expected an ISO 8601 date or datetime (or "now"), got "${value}"`);
  return new Date(ms).toISOString();
}

/**
 * `freight-sync backfill --from [--to]`: re-reads a time range into the sinks under its own cursor
 * (the streams' incremental checkpoints do not move, except that a finished backfill from the
 * stream's initialFrom seeds a stream that has none, so `run` does not read it again). Resumable:
 * the same command again continues where it stopped. Memory stays constant: records flow page by page.
 */
export function register(program: Command): void {
  program
    .command('backfill')
    .description('Read a past time range of the enabled streams into the sinks; rerun the same command to resume.')
    .requiredOption('--from <date>', 'start of the range (ISO 8601, inclusive)')
    .option('--to <date>', 'end of the range (ISO 8601 or "now", inclusive; capped at the server clock minus the safety lag)', 'now')
    .option('-s, --stream <name...>', 'only these streams')
    .option('--json', 'print the summary as JSON (as sync --json)')
    .addHelpText(
      'after',
      '\nOn day one use `run` (or `sync`): its first pass reads everything from sync.defaults.initialFrom. Backfill is for\nre-reading a past range. Dates select by updatedAt (loads, bills, support moves, customers), billing date (invoices)\nor createdAt (audits, events). A rerun with the same --from/--to resumes; a different range starts a new backfill.\n--to defaults to now; since "now" changes, a resumed open-ended backfill needs the --to it printed.',
    )
    .action(async (options: { from: string; to: string; stream?: string[]; json?: boolean }, command: Command) => {
      const from = backfillBound('--from', options.from);
      const to = backfillBound('--to', options.to);
      if (from >= to) throw new UsageError(`--from (${from}) must be before --to (${to})`);
      const runtime = await prepareCommand(command);
      const shutdown = installShutdown({
        graceMs: 10_000,
        onStop: (signal) => runtime.logger.warn(`${signal}: finishing the current batch, then stopping; rerun with --from ${from} --to ${to} to resume`),
      });
      if (options.to.trim().toLowerCase() === 'now') process.stderr.write(`backfill ${from} → ${to} (--to now); to resume after a stop, rerun with --to ${to}\n`);
      let stopProgress = () => undefined as void;
      try {
        const { summaries, hint } = await withApp(runtime, { withConnectors: true, streams: options.stream, signal: shutdown.abortSignal }, async (app) => {
          const progress = createProgressReporter({ from, to }, runtime.logger, { now: () => app.client.clock.now() });
          stopProgress = () => progress.stop();
          const result = await runPass(app, { command: 'backfill', backfill: { from, to }, signal: shutdown.abortSignal, stopSignal: shutdown.stopSignal, onProgress: progress.onProgress });
          progress.finish(result);
          return { summaries: result, hint: await emptyRangeHint(app, result, from, to) };
        });
        stopProgress();
        process.stdout.write(options.json ? `${JSON.stringify(summaries, null, 2)}\n` : renderSyncSummary(summaries));
        if (hint) process.stderr.write(`${hint}\n`);
        process.exitCode = summaries.every((s) => s.status === 'ok') ? EXIT_OK : EXIT_WORK_FAILED;
      } finally {
        stopProgress();
        shutdown.dispose();
      }
    });
}

/** A backfill that found nothing at all says so, and where the loads actually are. */
async function emptyRangeHint(app: AppContext, summaries: readonly StreamRunSummary[], from: string, to: string): Promise<string | null> {
  const found = summaries.reduce((n, s) => n + s.delivered + s.unchanged + s.rejected, 0);
  if (found > 0 || summaries.some((s) => s.status !== 'ok')) return null;
  let where = '';
  try {
    const range = await loadsDataRange(app.client);
    where = range.earliest
      ? ` The account's loads have ${range.field} from ${range.earliest} to ${range.latest}.`
      : ' The account has no loads at all.';
  } catch (error) {
    where = ` (Could not look up where the data is: ${describeError(error)}.)`;
  }
  return `No records between ${from} and ${to} in any selected stream.${where}`;
}
