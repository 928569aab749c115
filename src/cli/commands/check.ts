import type { Command } from 'commander';

/** `freight-sync check`: a connection test of the whole deployment, without starting it. */
export function register(program: Command): void {
  program
    .command('check')
    .description('Test the deployment without starting it: state database, API token, one cheap call per enabled stream, every connector.')
    .option('--json', 'print the results as JSON')
    .addHelpText(
      'after',
      '\nValidates the config first (as validate-config), then opens the state database, obtains a token, calls each\nenabled stream\'s endpoint for one record, and starts each connector the deployment uses on its own (connect,\nfolders writable, tables present or created as `run` would create them) and runs its check. Prints one row\nper part; exit 0 when all pass, 1 when any fails (the row names it), 2 for a bad config.',
    )
    .action(async (options: { json?: boolean }, command: Command) => {
      const { checkAction } = await import('../actions/check.js');
      await checkAction(options, command);
    });
}
