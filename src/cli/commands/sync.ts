import type { Command } from 'commander';
import { runPass } from '../../app/sync-pass.js';
import { installShutdown } from '../../app/shutdown.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderSyncSummary } from '../sync-summary.js';

/** `freight-sync sync`: one incremental pass of every enabled stream. */
export function register(program: Command): void {
  program
    .command('sync')
    .description('Run one incremental pass of every enabled stream (or those named with --stream) and print a summary.')
    .option('-s, --stream <name...>', 'only these streams')
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', '\nExit code 1 when any stream failed (its checkpoint stays where it was); the others still run.')
    .action(async (options: { stream?: string[]; json?: boolean }, command: Command) => {
      const runtime = await prepareCommand(command);
      const shutdown = installShutdown({
        graceMs: 10_000,
        onStop: (signal) => runtime.logger.warn(`${signal}: finishing the current batch, then stopping (send again to abort)`),
      });
      try {
        const summaries = await withApp(runtime, { withConnectors: true, streams: options.stream, signal: shutdown.abortSignal }, (app) =>
          runPass(app, { command: 'sync', signal: shutdown.abortSignal, stopSignal: shutdown.stopSignal }),
        );
        process.stdout.write(options.json ? `${JSON.stringify(summaries, null, 2)}\n` : renderSyncSummary(summaries));
        process.exitCode = summaries.every((s) => s.status === 'ok') ? EXIT_OK : EXIT_WORK_FAILED;
      } finally {
        shutdown.dispose();
      }
    });
}
