import type { Command } from 'commander';
import { composeDeploymentDaemon } from '../../app/compose.js';
import { startDaemon } from '../../app/daemon.js';
import { installShutdown } from '../../app/shutdown.js';
import { prepareAccounts, withApps } from '../runtime.js';
import { describeStartUpSettings } from '../start-up-settings.js';

/** The work of `freight-sync run` (options and help in commands/run.ts, loaded only when it runs). */
export async function runAction(options: { initialSync: boolean }, command: Command): Promise<void> {
  // Installed before anything else: a SIGTERM while the config loads and the state migrates (a
  // rolling restart reaching a replica that is still starting) stops it cleanly, not by the signal.
  let runtime: Awaited<ReturnType<typeof prepareAccounts>> | undefined;
  const shutdown = installShutdown({
    graceMs: 8_000,
    onStop: (signal) => (runtime ? runtime.logger.warn(`${signal}: draining (send again to abort)`) : process.stderr.write(`${signal}: stopping during start-up\n`)),
    onForce: () => runtime?.logger.warn('aborting in-flight work'),
  });
  try {
    // Every account of the config (or the one --account names), in one process.
    const prepared = await prepareAccounts(command, { all: true });
    runtime = prepared;
    if (shutdown.stopSignal.aborted) return prepared.logger.warn('stopped during start-up: nothing was started');
    await withApps(prepared.runtimes, { withConnectors: true, signal: shutdown.abortSignal }, async (apps) => {
      const daemon = composeDeploymentDaemon(apps, { stopSignal: shutdown.stopSignal, abortSignal: shutdown.abortSignal, runOnStart: options.initialSync });
      const runner = await startDaemon({ services: daemon.services, logger: prepared.logger });
      // One line once everything is up: addresses bound, first pass, streams (issue 13).
      prepared.logger.info(daemon.ready());
      prepared.logger.info(describeStartUpSettings());
      const stop = () => {
        prepared.logger.info('stopping: finishing current batches');
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
