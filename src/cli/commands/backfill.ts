import type { Command } from 'commander';
import { UsageError } from '../../util/errors.js';
import { parseLeaseWait } from '../lease-wait.js';

/** ISO 8601 date or datetime; `now` for the current time (the engine caps it at the server clock minus the safety lag). */
export function backfillBound(flag: string, value: string, now: () => Date = () => new Date()): string {
  if (value.trim().toLowerCase() === 'now') return now().toISOString();
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new UsageError(`${flag}: expected an ISO 8601 date or datetime (or "now"), got "${value}"`);
  return new Date(ms).toISOString();
}

/**
 * `freight-sync backfill --from [--to]`: re-reads a time range into the sinks under its own cursor
 * (the streams' incremental checkpoints do not move, except that a finished backfill from the
 * stream's initialFrom seeds a stream that has none, so `run` does not read it again). Resumable:
 * the same command again continues where it stopped. Memory stays constant: records flow page by page.
 */
export function register(program: Command): void {
  program
    .command('backfill')
    .description('Read a past time range of the enabled streams into the sinks; rerun the same command to resume.')
    .requiredOption('--from <date>', 'start of the range (ISO 8601, inclusive)')
    .option('--to <date>', 'end of the range (ISO 8601 or "now", inclusive; capped at the server clock minus the safety lag)', 'now')
    .option('-s, --stream <name...>', 'only these streams')
    .option('--json', 'print the summary as JSON (as sync --json)')
    .option('--lease-wait <duration>', 'when a `run` daemon (or another sync/backfill) works the account: wait this long for it to hand over, then refuse (ISO 8601)', 'PT2M')
    .addHelpText(
      'after',
      '\nOn day one use `run` (or `sync`): its first pass reads everything from sync.defaults.initialFrom. Backfill is for\nre-reading a past range. Dates select by updatedAt (loads, bills, support moves, customers), billing date (invoices)\nor createdAt (audits, events). A rerun with the same --from/--to resumes; a different range starts a new backfill.\n--to defaults to now; since "now" changes, a resumed open-ended backfill needs the --to it printed.\nBeside a running daemon, backfill asks it for the account and gives it back when done (see sync --help).',
    )
    .action(async (options: { from: string; to: string; stream?: string[]; json?: boolean; leaseWait: string }, command: Command) => {
      const from = backfillBound('--from', options.from);
      const to = backfillBound('--to', options.to);
      if (from >= to) throw new UsageError(`--from (${from}) must be before --to (${to})`);
      const leaseWaitMs = parseLeaseWait(options.leaseWait);
      const { backfillAction } = await import('../actions/backfill.js');
      await backfillAction({ from, to, toIsNow: options.to.trim().toLowerCase() === 'now', stream: options.stream, json: options.json, leaseWaitMs }, command);
    });
}
