import type { Command } from 'commander';
import { composeDeploymentDaemon } from '../../app/compose.js';
import { startDaemon } from '../../app/daemon.js';
import { installShutdown } from '../../app/shutdown.js';
import { prepareAccounts, withApps } from '../runtime.js';

/** The work of `freight-sync run` (options and help in commands/run.ts, loaded only when it runs). */
export async function runAction(options: { initialSync: boolean }, command: Command): Promise<void> {
  // Every account of the config (or the one --account names), in one process.
  const runtime = await prepareAccounts(command, { all: true });
  const shutdown = installShutdown({
    graceMs: 8_000,
    onStop: (signal) => runtime.logger.warn(`${signal}: draining (send again to abort)`),
    onForce: () => runtime.logger.warn('aborting in-flight work'),
  });
  try {
    await withApps(runtime.runtimes, { withConnectors: true, signal: shutdown.abortSignal }, async (apps) => {
      const daemon = composeDeploymentDaemon(apps, { stopSignal: shutdown.stopSignal, abortSignal: shutdown.abortSignal, runOnStart: options.initialSync });
      const runner = await startDaemon({ services: daemon.services, logger: runtime.logger });
      // One line once everything is up: addresses bound, first pass, streams (issue 13).
      runtime.logger.info(daemon.ready());
      const stop = () => {
        runtime.logger.info('stopping: finishing current batches');
        void runner.stop('signal');
      };
      if (shutdown.stopSignal.aborted) stop();
      else shutdown.stopSignal.addEventListener('abort', stop, { once: true });
      // Rejects when a service loop died (the others are stopped first): `run` then exits 1
      // with the service and the error named.
      await runner.promise;
    });
  } finally {
    shutdown.dispose();
  }
}
