import type { Command } from 'commander';
import { OUTBOX_STATES } from '../../state/outbox-states.js';
import type { OutboxState } from '../../state/tables.js';
import { UsageError } from '../../util/errors.js';

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
      const { outboxListAction } = await import('../actions/outbox.js');
      await outboxListAction({ states: options.state as OutboxState[] | undefined, limit, json: options.json }, command);
    });

  const steer = (name: 'retry' | 'cancel', description: string) =>
    outbox
      .command(`${name} <id>`)
      .description(description)
      .action(async (idText: string, _options: unknown, command: Command) => {
        const id = parseId(idText);
        const { outboxSteerAction } = await import('../actions/outbox.js');
        await outboxSteerAction(name, id, command);
      });
  steer('retry', 'Make a dead, cancelled or waiting command due now (a create that was sent before is looked up first, never duplicated).');
  steer('cancel', 'Give up a command that is not done; its request is written back as failed.');
}
