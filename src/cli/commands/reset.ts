import type { Command } from 'commander';
import { STREAM_NAMES, isStreamName } from '../../config/stream-names.js';

/** `freight-sync reset --stream NAME --to DATE`: move a stream's checkpoint. */
export function register(program: Command): void {
  program
    .command('reset')
    .description('Move a stream\'s checkpoint so its next run starts at --to (minus the lookback).')
    .requiredOption('-s, --stream <name>', `stream (${STREAM_NAMES.join(', ')})`)
    .requiredOption('--to <date>', 'ISO 8601 date or datetime the stream restarts from')
    .option('--redeliver', 'also forget what was delivered, so records already sent are sent again')
    .option('--force', 'reset even though a daemon (`run`) is recorded as owning the state store')
    .addHelpText(
      'after',
      '\nStop the daemon first: a running stream would overwrite the new checkpoint with its own. reset refuses\nwhile a live `run` owns the state store (it names host, pid and start); a daemon killed with SIGKILL does\nnot block it (its pid is gone, or its heartbeat is over a minute old). --force resets anyway.',
    )
    .action(async (options: { stream: string; to: string; redeliver?: boolean; force?: boolean }, command: Command) => {
      const { resetAction } = await import('../actions/reset.js');
      await resetAction(options, command);
    });
}
