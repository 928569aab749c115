import type { Command } from 'commander';
import type { TableMigration } from '../../contracts/index.js';
import { UsageError } from '../../util/errors.js';
import { prepareCommand, withApp } from '../runtime.js';

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
      const runtime = await prepareCommand(command);
      await withApp(runtime, { withConnectors: true, withSources: false }, async (app) => {
        const handles = app.connectors?.connectors ?? [];
        const chosen = options.connector === undefined ? handles : handles.filter((h) => h.name === options.connector);
        if (options.connector !== undefined && chosen.length === 0) {
          throw new UsageError(`--connector: "${options.connector}" is not a sink of an enabled stream (sinks: ${handles.map((h) => h.name).join(', ') || 'none'})`);
        }
        const apply = options.apply === true;
        let pending = 0;
        for (const handle of chosen) {
          if (!handle.instance.migrate) {
            process.stdout.write(`${handle.name}: nothing to migrate (no typed tables)\n`);
            continue;
          }
          const migrations = await handle.instance.migrate({ apply }, new AbortController().signal);
          pending += migrations.length;
          process.stdout.write(describeMigrations(handle.name, migrations, apply));
        }
        if (pending > 0 && !apply) process.stdout.write('\nRun again with --apply to make these changes (back up the tables first).\n');
      });
    });
}

function describeMigrations(connector: string, migrations: readonly TableMigration[], applied: boolean): string {
  if (migrations.length === 0) return `${connector}: every table has the column types this version writes\n`;
  const lines = [`${connector}: ${migrations.length} table(s) ${applied ? 'migrated' : 'need a type change'}`];
  for (const migration of migrations) {
    lines.push(`  ${migration.table}`);
    for (const change of migration.changes) lines.push(`    ${change.column}: ${change.current} -> ${change.wanted}`);
    for (const statement of migration.statements) lines.push(`      ${statement};`);
  }
  return `${lines.join('\n')}\n`;
}
