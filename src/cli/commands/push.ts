import type { Command } from 'commander';

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
      const { pushAction } = await import('../actions/push.js');
      await pushAction(options, command);
    });
}
