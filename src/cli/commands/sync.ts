import type { Command } from 'commander';
import type { SyncOptions } from '../actions/sync.js';

/** `freight-sync sync`: one incremental pass of every enabled stream; with `--push`, then one push. */
export function register(program: Command): void {
  program
    .command('sync')
    .description('Run one incremental pass of every enabled stream (or those named with --stream) and print a summary; --push also runs one push afterwards (for cron).')
    .option('-s, --stream <name...>', 'only these streams')
    .option('--json', 'print the summary as JSON')
    .option('--push', 'after the pull, take commands from the outbound sources once and send them, as `push` does (needs outbound.sources)')
    .option('--max-wait <duration>', 'with --push: keep waiting for retries due within this long (ISO 8601)', 'PT5M')
    .option('--lease-wait <duration>', 'when a `run` daemon (or another sync/backfill) works the account: wait this long for it to hand over, then refuse (ISO 8601)', 'PT2M')
    .addHelpText(
      'after',
      '\nExit code 1 when any stream failed (its checkpoint stays where it was; the others still run) or, with --push,\nwhen any request was rejected, any command went dead or a source failed.\n--push pulls first (customers and consignees pulled in the same pass resolve ERP customer codes), then pushes;\nthe push still runs when a stream failed. A stop request (SIGTERM) during the pull skips the push.\nBeside a running daemon, sync asks it for the account (it finishes its current batches and hands over), works,\nthen gives the account back; after --lease-wait without the account it refuses, naming the holder (exit 1).\n--json prints the stream summaries as an array; with --push, {"streams": [...], "push": {...}}.',
    )
    .action(async (options: SyncOptions, command: Command) => {
      const { syncAction } = await import('../actions/sync.js');
      await syncAction(options, command);
    });
}
