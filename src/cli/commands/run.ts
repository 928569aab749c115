import type { Command } from 'commander';
import { runDaemon } from '../../app/daemon.js';
import { DAEMON_SERVICES } from '../../app/daemon-services.js';
import { installShutdown } from '../../app/shutdown.js';
import { prepareCommand, withApp } from '../runtime.js';

/** `freight-sync run`: the long-running daemon. */
export function register(program: Command): void {
  program
    .command('run')
    .description('Run as a daemon: every enabled stream on its cron schedule (plus webhooks and outbound when configured).')
    .option('--no-initial-sync', 'wait for each stream\'s first cron tick instead of syncing at start')
    .addHelpText(
      'after',
      '\nSIGTERM/SIGINT: the first finishes the current batch of every stream, commits its checkpoint and exits\n(within 10 s); a second one aborts at once.',
    )
    .action(async (options: { initialSync: boolean }, command: Command) => {
      const runtime = await prepareCommand(command);
      const shutdown = installShutdown({
        graceMs: 8_000,
        onStop: (signal) => runtime.logger.warn(`${signal}: draining (send again to abort)`),
        onForce: () => runtime.logger.warn('aborting in-flight work'),
      });
      try {
        await withApp(runtime, { withConnectors: true, signal: shutdown.abortSignal }, (app) =>
          runDaemon(app, { stopSignal: shutdown.stopSignal, abortSignal: shutdown.abortSignal, runOnStart: options.initialSync, services: DAEMON_SERVICES }),
        );
      } finally {
        shutdown.dispose();
      }
    });
}
