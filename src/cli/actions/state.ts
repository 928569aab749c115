import path from 'node:path';
import type { Command } from 'commander';
import { copyState } from '../../app/state-copy.js';
import { describeStateLocation, stateLocationOf, type StateLocation } from '../../state/state-location.js';
import { prepareCommand } from '../runtime.js';
import { renderTable } from '../table.js';

/** The work of `freight-sync state copy` (options and help in commands/state.ts). */
export async function stateCopyAction(options: { to: string; schema: string; force?: boolean; json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  const from = stateLocationOf(runtime.loaded.config.state);
  const to: StateLocation = /^postgres(ql)?:\/\//i.test(options.to)
    ? { kind: 'postgres', url: options.to, schema: options.schema, poolSize: 4 }
    : { kind: 'sqlite', path: path.resolve(options.to) };
  const result = await copyState(from, to, { force: options.force });
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ from: describeStateLocation(from), to: describeStateLocation(to), tables: result.tables }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`copied the state of ${describeStateLocation(from)} to ${describeStateLocation(to)}\n`);
  process.stdout.write(`${renderTable(['table', 'rows'], result.tables.map((t) => [t.table, t.rows]))}`);
}
