import type { Command } from 'commander';
import type { RejectedSelection } from '../actions/rejected.js';
import type { QuarantineKind } from '../../state/tables.js';
import { UsageError } from '../../util/errors.js';

const KINDS: readonly QuarantineKind[] = ['api-schema', 'sink', 'webhook'];

function parseId(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id <= 0) throw new UsageError(`ID: expected a quarantine id such as 17 (see freight-sync rejected list), got "${text}"`);
  return id;
}

function parseKinds(kinds: readonly string[] | undefined): QuarantineKind[] | undefined {
  for (const kind of kinds ?? []) {
    if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind: "${kind}" is not one of ${KINDS.join(', ')}`);
  }
  return kinds as QuarantineKind[] | undefined;
}

interface SelectionFlags {
  all?: boolean;
  stream?: string;
  kind?: string[];
}

function parseSelection(idTexts: readonly string[], flags: SelectionFlags): RejectedSelection {
  return { ids: idTexts.map(parseId), all: flags.all, stream: flags.stream, kinds: parseKinds(flags.kind) };
}

/**
 * `freight-sync rejected list|show|retry|discard`: the one quarantine — records the API schema
 * refused, records a sink refused, webhook events parked as failed — in one vocabulary. The work
 * is in actions/rejected.ts, loaded only when a subcommand runs.
 */
export function register(program: Command): void {
  const rejected = program
    .command('rejected')
    .description('Inspect, re-deliver or discard what did not land: records the API schema or a sink refused, failed webhook events.');

  rejected
    .command('list')
    .description('List quarantined entries, oldest first.')
    .option('-s, --stream <name>', 'only this stream (webhook events: webhook:<family>)')
    .option('--kind <kind...>', `only these kinds (${KINDS.join(', ')})`)
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print as JSON')
    .action(async (options: { stream?: string; kind?: string[]; limit: string; json?: boolean }, command: Command) => {
      const kinds = parseKinds(options.kind);
      const limit = Number(options.limit);
      if (!Number.isSafeInteger(limit) || limit <= 0) throw new UsageError(`--limit: expected a positive number, got "${options.limit}"`);
      const { rejectedListAction } = await import('../actions/rejected.js');
      await rejectedListAction({ stream: options.stream, kinds, limit, json: options.json }, command);
    });

  rejected
    .command('show <id>')
    .description('Show one entry in full, with the record (or webhook body) as it was received.')
    .option('--json', 'print as JSON')
    .action(async (idText: string, options: { json?: boolean }, command: Command) => {
      const id = parseId(idText);
      const { rejectedShowAction } = await import('../actions/rejected.js');
      await rejectedShowAction(id, options, command);
    });

  rejected
    .command('retry [ids...]')
    .description('Re-deliver now: a sink refusal to the sink that refused it, a failed webhook event through the inbox. Reports what landed.')
    .option('--all', 'every entry')
    .option('-s, --stream <name>', 'the entries of this stream')
    .option('--kind <kind...>', `the entries of these kinds (${KINDS.join(', ')})`)
    .option('--json', 'print the outcome as JSON')
    .addHelpText('after', '\nExit code 1 when any entry did not land (it stays quarantined). Records the API schema refused cannot be retried: the API must send a valid version.')
    .action(async (idTexts: string[], options: SelectionFlags & { json?: boolean }, command: Command) => {
      const selection = parseSelection(idTexts, options);
      const { rejectedRetryAction } = await import('../actions/rejected.js');
      await rejectedRetryAction(selection, options, command);
    });

  rejected
    .command('discard [ids...]')
    .description('Forget entries for good: they are not re-delivered (a newer version from the API still is).')
    .option('--all', 'every entry')
    .option('-s, --stream <name>', 'the entries of this stream')
    .option('--kind <kind...>', `the entries of these kinds (${KINDS.join(', ')})`)
    .option('--json', 'print the outcome as JSON')
    .action(async (idTexts: string[], options: SelectionFlags & { json?: boolean }, command: Command) => {
      const selection = parseSelection(idTexts, options);
      const { rejectedDiscardAction } = await import('../actions/rejected.js');
      await rejectedDiscardAction(selection, options, command);
    });
}
