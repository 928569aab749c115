import type { Command } from 'commander';

/** `freight-sync run`: the long-running daemon. */
export function register(program: Command): void {
  program
    .command('run')
    .description('Run as a daemon: every enabled stream on its cron schedule (plus webhooks and outbound when configured).')
    .option('--no-initial-sync', 'wait for each stream\'s first cron tick instead of syncing at start')
    .addHelpText(
      'after',
      '\nSIGTERM/SIGINT: the first finishes the current batch of every stream, commits its checkpoint and exits\n(within 10 s); a second one aborts at once. A service loop that keeps failing (outbound dispatch or\npoll, webhook processing; see `supervision` in the config) stops the daemon with exit 1, naming the\nservice and the error.',
    )
    .action(async (options: { initialSync: boolean }, command: Command) => {
      // A SIGTERM while the daemon's modules load stops it cleanly once they have.
      const { holdEarlyStopSignals } = await import('../../app/shutdown.js');
      holdEarlyStopSignals();
      const { runAction } = await import('../actions/run.js');
      await runAction(options, command);
    });
}
