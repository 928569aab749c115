import type { Command } from 'commander';

/**
 * `freight-sync sink migrate [--apply] [--connector NAME]`: the column type changes the sink
 * tables need (money that an older version stored as double precision, `_raw` as text, …), as the
 * statements that make them; run with `--apply`. New columns and indexes need no command: every
 * start adds them.
 */
export function register(program: Command): void {
  const sink = program.command('sink').description('Maintain sink tables (column types after an upgrade).');
  sink
    .command('migrate')
    .description('Print the ALTER statements that give existing sink tables the column types this version writes; --apply runs them.')
    .option('--apply', 'run the statements (back up the tables first: a type change rewrites them)')
    .option('--connector <name>', 'only this connector')
    .addHelpText('after', '\nStop the daemon first when applying: a table is rewritten while it changes type.')
    .action(async (options: { apply?: boolean; connector?: string }, command: Command) => {
      const { sinkAction } = await import('../actions/sink.js');
      await sinkAction(options, command);
    });
}
