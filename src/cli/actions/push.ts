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

/** The work of `freight-sync push` (options and help in commands/push.ts, loaded only when it runs). */
export async function pushAction(options: { maxWait: string; json?: boolean; dryRun?: boolean }, command: Command): Promise<void> {
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
}
