import type { Command } from 'commander';
import type { TableMigration } from '../../contracts/index.js';
import { UsageError } from '../../util/errors.js';
import { prepareCommand, withApp } from '../runtime.js';

/** The work of `freight-sync sink` (options and help in commands/sink.ts, loaded only when it runs). */
export async function sinkAction(options: { apply?: boolean; connector?: string }, command: Command): Promise<void> {
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
