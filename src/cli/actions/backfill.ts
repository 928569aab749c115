import type { Command } from 'commander';
import type { AppContext } from '../../app/compose.js';
import { loadsDataRange } from '../../app/data-range.js';
import type { StreamRunSummary } from '../../sync/stream-runner.js';
import { runPass } from '../../app/sync-pass.js';
import { withAccountLease } from '../../app/one-shot-lease.js';
import { installShutdown } from '../../app/shutdown.js';
import { describeError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { createProgressReporter } from '../progress.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderSyncSummary } from '../sync-summary.js';

export interface BackfillRun {
  /** Bounds already checked and normalised by the command. */
  from: string;
  to: string;
  /** `--to now`: the resolved bound is printed so that a resume can repeat it. */
  toIsNow: boolean;
  stream?: string[];
  json?: boolean;
  /** `--lease-wait`, in ms (already parsed). */
  leaseWaitMs: number;
}

/** The work of `freight-sync backfill` (options, help and bounds in commands/backfill.ts, loaded only when it runs). */
export async function backfillAction(options: BackfillRun, command: Command): Promise<void> {
  const { from, to } = options;
  const runtime = await prepareCommand(command);
  const shutdown = installShutdown({
    graceMs: 10_000,
    onStop: (signal) => runtime.logger.warn(`${signal}: finishing the current batch, then stopping; rerun with --from ${from} --to ${to} to resume`),
  });
  if (options.toIsNow) process.stderr.write(`backfill ${from} → ${to} (--to now); to resume after a stop, rerun with --to ${to}\n`);
  let stopProgress = () => undefined as void;
  try {
    const lease = { command: 'backfill', waitMs: options.leaseWaitMs, stopSignal: shutdown.stopSignal, abortSignal: shutdown.abortSignal, logger: runtime.logger };
    const { summaries, hint } = await withApp(runtime, { withConnectors: true, streams: options.stream, signal: shutdown.abortSignal }, (opened) =>
      withAccountLease(opened, lease, async (app, signal) => {
        const progress = createProgressReporter({ from, to }, runtime.logger, { now: () => app.client.clock.now() });
        stopProgress = () => progress.stop();
        const result = await runPass(app, { command: 'backfill', backfill: { from, to }, signal, stopSignal: shutdown.stopSignal, onProgress: progress.onProgress });
        progress.finish(result);
        return { summaries: result, hint: await emptyRangeHint(app, result, from, to) };
      }),
    );
    stopProgress();
    process.stdout.write(options.json ? `${JSON.stringify(summaries, null, 2)}\n` : renderSyncSummary(summaries));
    if (hint) process.stderr.write(`${hint}\n`);
    process.exitCode = summaries.every((s) => s.status === 'ok') ? EXIT_OK : EXIT_WORK_FAILED;
  } finally {
    stopProgress();
    shutdown.dispose();
  }
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
