import type { Command } from 'commander';
import { retryCommand, cancelCommand } from '../../outbound/outbox-admin.js';
import type { OutboxState } from '../../state/tables.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderTable } from '../table.js';

/** `outbox list` (options checked in commands/outbox.ts, loaded only when it runs). */
export async function outboxListAction(options: { states?: OutboxState[]; limit: number; json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  await withApp(runtime, { withConnectors: false }, async (app) => {
    const rows = await app.stores.outbox.list({ states: options.states, limit: options.limit });
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
}

/** `outbox retry|cancel <id>`. */
export async function outboxSteerAction(name: 'retry' | 'cancel', id: number, command: Command): Promise<void> {
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
}
