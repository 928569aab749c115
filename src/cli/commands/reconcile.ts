import type { Command } from 'commander';
import type { ReconcileOptions } from '../actions/reconcile.js';
import { RECONCILE_STREAM_NAMES } from '../../config/types.js';

/**
 * `freight-sync reconcile`: proves what the sinks hold against the live API for a period, and with
 * `--repair` re-delivers exactly what differs. Exit 0 when nothing differs (or everything found was
 * repaired) and the whole period was checked; 1 otherwise.
 */
export function register(program: Command): void {
  program
    .command('reconcile')
    .description('Compare what the sinks hold with the live API for a period (loads, invoices, bills); --repair re-delivers exactly the differing keys.')
    .option('--from <date>', 'start of the period (ISO 8601; default: --days before --to)')
    .option('--to <date>', 'end of the period (ISO 8601; default: the server clock)')
    .option('--days <n>', 'length of the default period in days (default: reconcile.days, 30)')
    .option('-s, --stream <name...>', `only these streams (${RECONCILE_STREAM_NAMES.join(', ')})`)
    .option('--max-requests <n>', 'API requests this run may make (default: reconcile.maxRequests, else one minute of api.rateLimit.requestsPerSecond)')
    .option('--repair', 're-deliver the missing and stale keys and write tombstones for extra ones (otherwise read-only)')
    .option('--json', 'print the full report as JSON')
    .option('--report <file>', 'also write the full report as CSV to this file')
    .addHelpText(
      'after',
      '\nThe period selects loads and bills by updatedAt, invoices by billing date. Every API request counts against\n--max-requests; when it runs out the report says what was not checked. Exit 0: nothing differs (or all was\nrepaired) and the whole period was checked; 1: differences, unrepaired keys or an unchecked part.',
    )
    .action(async (options: ReconcileOptions, command: Command) => {
      const { reconcileAction } = await import('../actions/reconcile.js');
      await reconcileAction(options, command);
    });
}
