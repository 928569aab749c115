import type { Command } from 'commander';
import { retryCommand, cancelCommand } from '../../outbound/outbox-admin.js';
import { OUTBOX_STATES } from '../../state/outbox-states.js';
import type { OutboxState } from '../../state/tables.js';
import { UsageError } from '../../util/errors.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderTable } from '../table.js';

function parseId(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id <= 0) throw new UsageError(`ID: expected an outbox id such as 17, got "${text}"`);
  return id;
}

/** `freight-sync outbox list|retry|cancel`: inspect and steer the outbound command queue. */
export function register(program: Command): void {
  const outbox = program.command('outbox').description('Inspect the outbound queue, retry or cancel commands.');

  outbox
    .command('list')
    .description('List outbox commands, newest first.')
    .option('--state <state...>', `only these states (${OUTBOX_STATES.join(', ')})`)
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'print as JSON')
    .action(async (options: { state?: string[]; limit: string; json?: boolean }, command: Command) => {
      for (const state of options.state ?? []) {
        if (!(OUTBOX_STATES as readonly string[]).includes(state)) throw new UsageError(`--state: "${state}" is not one of ${OUTBOX_STATES.join(', ')}`);
      }
      const limit = Number(options.limit);
      if (!Number.isSafeInteger(limit) || limit <= 0) throw new UsageError(`--limit: expected a positive number, got "${options.limit}"`);
      const runtime = await prepareCommand(command);
      await withApp(runtime, { withConnectors: false }, async (app) => {
        const rows = await app.stores.outbox.list({ states: options.state as OutboxState[] | undefined, limit });
        if (options.json) {
          process.stdout.write(`${JSON.stringify(rows.map(({ payload: _payload, ...rest }) => rest), null, 2)}\n`);
          return;
        }
        process.stdout.write(
          renderTable(
            ['id', 'erp_key', 'kind', 'rev', 'state', 'attempts', 'next attempt', 'reference', 'origin', 'last error'],
            rows.map((r) => [
              r.id,
              r.erp_key,
              r.kind,
              r.revision,
              r.state,
              r.attempts,
              ['done', 'dead', 'cancelled'].includes(r.state) ? '-' : r.next_attempt_at,
              r.result_reference_number ?? '',
              `${r.origin_source}:${r.origin_unit}#${r.origin_ref}`,
              (r.last_error ?? '').slice(0, 100),
            ]),
          ),
        );
      });
    });

  const steer = (name: 'retry' | 'cancel', description: string) =>
    outbox
      .command(`${name} <id>`)
      .description(description)
      .action(async (idText: string, _options: unknown, command: Command) => {
        const id = parseId(idText);
        const runtime = await prepareCommand(command);
        await withApp(runtime, { withConnectors: false }, async (app) => {
          const repo = app.stores.outbox;
          const outcome = name === 'retry' ? await retryCommand(repo, id) : await cancelCommand(repo, id);
          const extra = outcome.requeued.length > 0 ? `; requeued dependents ${outcome.requeued.map((n) => `#${n}`).join(', ')}` : '';
          process.stdout.write(`outbox #${id} (${outcome.row.kind} ${outcome.row.erp_key}) is now ${outcome.row.state}${extra}\n`);
          for (const note of outcome.notes) process.stdout.write(`  ${note}\n`);
          // The sources are not opened here: the running daemon or the next push acts and writes back.
          process.stdout.write('  the running daemon picks it up; or run freight-sync push\n');
        });
      });
  steer('retry', 'Make a dead, cancelled or waiting command due now (a create that was sent before is looked up first, never duplicated).');
  steer('cancel', 'Give up a command that is not done; its request is written back as failed.');
}
