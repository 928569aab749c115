import type { Command } from 'commander';

/** `freight-sync state copy --to URL`: move the state to another store (SQLite file → PostgreSQL). */
export function register(program: Command): void {
  const state = program.command('state').description('Manage the state store itself.');
  state
    .command('copy')
    .description('Copy the whole state (checkpoints, tokens, seen hashes, outbox, inbox, quarantine) to another store, e.g. from the SQLite file to PostgreSQL.')
    .requiredOption('--to <target>', 'a postgres:// URL, or the path of a SQLite file')
    .option('--schema <name>', 'PostgreSQL schema of the target', 'freight_sync')
    .option('--force', 'replace the state a target already holds')
    .option('--json', 'print the rows copied per table as JSON')
    .addHelpText(
      'after',
      '\nStop the daemon first (copy refuses while one owns the source). Then set state.url (and\nstate.schema) in the config to the target and start it, or its replicas (docs/scaling-out.md).',
    )
    .action(async (options: { to: string; schema: string; force?: boolean; json?: boolean }, command: Command) => {
      const { stateCopyAction } = await import('../actions/state.js');
      await stateCopyAction(options, command);
    });
}
