import type { Command } from 'commander';

/** `freight-sync status`: per stream checkpoint, lag, last run, records and errors. */
export function register(program: Command): void {
  program
    .command('status')
    .description('Show each stream\'s checkpoint, lag behind the server clock, last run, records delivered and errors.')
    .option('--json', 'print as JSON')
    .option('--offline', 'do not ask the API for its clock (lag is then measured against the local clock)')
    .action(async (options: { json?: boolean; offline?: boolean }, command: Command) => {
      const { statusAction } = await import('../actions/status.js');
      await statusAction(options, command);
    });
}
