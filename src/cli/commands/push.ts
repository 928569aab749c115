import type { Command } from 'commander';
import { composeDryRun, composeOutbound } from '../../app/compose.js';
import { installShutdown } from '../../app/shutdown.js';
import { runDryRun } from '../../outbound/dry-run.js';
import { runPush } from '../../outbound/run-push.js';
import { parseIsoDuration } from '../../util/duration.js';
import { UsageError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderDryRun } from '../dry-run-report.js';
import { pushFailed, renderPushSummary } from '../push-summary.js';

/** `freight-sync push`: one pass of the outbound side. */
export function register(program: Command): void {
  program
    .command('push')
    .description('Take commands from every outbound source once, send them (load creates, updates, status changes, documents, deletes; customer creates and updates; invoice creates) and write the results back; --dry-run rehearses without sending.')
    .option('--max-wait <duration>', 'keep waiting for retries due within this long (ISO 8601)', 'PT5M')
    .option('--json', 'print the summary as JSON')
    .option('--dry-run', 'validate every request of every source and report what a push would do; send nothing, take nothing, store nothing')
    .addHelpText(
      'after',
      '\nExit code 1 when any request was rejected, any command went dead, or a source failed. A second SIGTERM aborts in-flight requests;\nthe next push or run reconciles them (looks the load up) instead of sending them again.\n--dry-run: exit 1 when any request would be rejected or a source could not be read; inbox files get <file>.dry-run.result.csv beside them.',
    )
    .action(async (options: { maxWait: string; json?: boolean; dryRun?: boolean }, command: Command) => {
      const maxWaitMs = parseIsoDuration(options.maxWait);
      if (maxWaitMs === undefined) throw new UsageError(`--max-wait: expected an ISO 8601 duration such as PT5M, got "${options.maxWait}"`);
      const runtime = await prepareCommand(command);
      const shutdown = installShutdown({
        graceMs: 10_000,
        onStop: (signal) => runtime.logger.warn(`${signal}: finishing the requests in flight, then stopping (send again to abort)`),
      });
      const open = { withConnectors: true, withSources: true, streams: [], signal: shutdown.abortSignal };
      try {
        if (options.dryRun) {
          // Nothing is sent or stored, so a stop simply aborts.
          const summary = await withApp(runtime, open, (app) => runDryRun(composeDryRun(app), shutdown.stopSignal));
          process.stdout.write(options.json ? `${JSON.stringify(summary, null, 2)}\n` : renderDryRun(summary));
          process.exitCode = summary.failed > 0 || summary.sourceErrors.length > 0 ? EXIT_WORK_FAILED : EXIT_OK;
          return;
        }
        const summary = await withApp(runtime, open, (app) =>
          runPush(composeOutbound(app, { abortSignal: shutdown.abortSignal }), { stopSignal: shutdown.stopSignal, abortSignal: shutdown.abortSignal, maxWaitMs }),
        );
        process.stdout.write(options.json ? `${JSON.stringify(summary, null, 2)}\n` : renderPushSummary(summary));
        process.exitCode = pushFailed(summary) ? EXIT_WORK_FAILED : EXIT_OK;
      } finally {
        shutdown.dispose();
      }
    });
}
