import type { Command } from 'commander';
import { composeOutbound } from '../../app/compose.js';
import { runPass } from '../../app/sync-pass.js';
import { withAccountLease } from '../../app/one-shot-lease.js';
import { installShutdown } from '../../app/shutdown.js';
import { runPush, type PushSummary } from '../../outbound/run-push.js';
import type { StreamRunSummary } from '../../sync/stream-runner.js';
import { parseIsoDuration } from '../../util/duration.js';
import { UsageError } from '../../util/errors.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { pushFailed, renderPushSummary } from '../push-summary.js';
import { parseLeaseWait } from '../lease-wait.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderSyncSummary } from '../sync-summary.js';

export interface SyncOptions {
  stream?: string[];
  json?: boolean;
  push?: boolean;
  maxWait: string;
  leaseWait: string;
}

/** The work of `freight-sync sync` (options and help in commands/sync.ts, loaded only when it runs). */
export async function syncAction(options: SyncOptions, command: Command): Promise<void> {
  const maxWaitMs = parseIsoDuration(options.maxWait);
  if (maxWaitMs === undefined) throw new UsageError(`--max-wait: expected an ISO 8601 duration such as PT5M, got "${options.maxWait}"`);
  const leaseWaitMs = parseLeaseWait(options.leaseWait);
  const runtime = await prepareCommand(command);
  if (options.push && runtime.loaded.config.outbound.sources.length === 0) {
    throw new UsageError('--push: no outbound source is configured (outbound.sources); see docs/outbound.md');
  }
  const shutdown = installShutdown({
    graceMs: 10_000,
    onStop: (signal) => runtime.logger.warn(`${signal}: finishing the current batch, then stopping (send again to abort)`),
  });
  try {
    const open = { withConnectors: true, withSources: options.push === true, streams: options.stream, signal: shutdown.abortSignal };
    const lease = { command: 'sync', waitMs: leaseWaitMs, stopSignal: shutdown.stopSignal, abortSignal: shutdown.abortSignal, logger: runtime.logger };
    const { summaries, push } = await withApp(runtime, open, (opened) =>
      withAccountLease(opened, lease, async (app, signal) => {
        const pulled = await runPass(app, { command: 'sync', signal, stopSignal: shutdown.stopSignal });
        if (!options.push || shutdown.stopSignal.aborted) return { summaries: pulled, push: undefined };
        const pushed = await runPush(composeOutbound(app, { abortSignal: signal }), { stopSignal: shutdown.stopSignal, abortSignal: signal, maxWaitMs });
        return { summaries: pulled, push: pushed };
      }),
    );
    process.stdout.write(options.json ? `${JSON.stringify(options.push ? { streams: summaries, push: push ?? null } : summaries, null, 2)}\n` : render(summaries, options.push === true, push));
    const pullOk = summaries.every((s) => s.status === 'ok');
    // A push skipped by a stop request did not fail; the stop is what the pull's statuses report.
    process.exitCode = pullOk && !(push && pushFailed(push)) ? EXIT_OK : EXIT_WORK_FAILED;
  } finally {
    shutdown.dispose();
  }
}

function render(summaries: readonly StreamRunSummary[], pushRequested: boolean, push: PushSummary | undefined): string {
  let out = renderSyncSummary(summaries);
  if (pushRequested) out += push ? `\n${renderPushSummary(push)}` : '\npush skipped: stopped during the pull\n';
  return out;
}
