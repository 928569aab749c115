import type { Command } from 'commander';

/**
 * `freight-sync validate-config`: loads the config and validates the whole deployment (schema,
 * stream options and page sizes, connector options, mappings, webhooks) with the same
 * validateDeployment every other command runs before it opens the app, then prints the effective
 * config (defaults applied, secrets masked) as YAML. It creates nothing. A ConfigError
 * propagates to the root handler, which prints every issue and exits with code 2.
 */
export function register(program: Command): void {
  program
    .command('validate-config')
    .description('Validate the config file and print the effective config (defaults applied, secrets masked).')
    .addHelpText(
      'after',
      '\nChecks the whole deployment without creating anything: schema, stream options and page sizes, connector\noptions and capabilities, mappings, webhooks. Every other command runs the same check first. Exit 2\nnames the file and the path of every problem.',
    )
    .action(async (_options: unknown, command: Command) => {
      const { validateConfigAction } = await import('../actions/validate-config.js');
      await validateConfigAction(command);
    });
}
