import type { Command } from 'commander';
import { checkDeployment } from '../../app/check-deployment.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand } from '../runtime.js';
import { renderTable } from '../table.js';

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
      const runtime = await prepareCommand(command);
      const rows = await checkDeployment(runtime.deployment, { logger: runtime.logger, signal: new AbortController().signal });
      const failed = rows.filter((r) => !r.ok);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ok: failed.length === 0, checks: rows }, null, 2)}\n`);
      } else {
        process.stdout.write(renderTable(['kind', 'target', 'result', 'ms', 'detail'], rows.map((r) => [r.kind, r.target, r.ok ? 'ok' : 'FAILED', r.durationMs, r.detail])));
        process.stdout.write(failed.length === 0 ? `\nall ${rows.length} checks passed\n` : `\n${failed.length} of ${rows.length} checks failed: ${failed.map((r) => `${r.kind} ${r.target}`).join(', ')}\n`);
      }
      process.exitCode = failed.length === 0 ? EXIT_OK : EXIT_WORK_FAILED;
    });
}
