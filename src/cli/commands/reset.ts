import type { Command } from 'commander';
import { UsageError } from '../../util/errors.js';
import { STREAM_NAMES, isStreamName } from '../../config/stream-names.js';
import { streamByName } from '../../sync/streams/index.js';
import { prepareCommand, withApp } from '../runtime.js';

/** `freight-sync reset --stream NAME --to DATE`: move a stream's checkpoint. */
export function register(program: Command): void {
  program
    .command('reset')
    .description('Move a stream\'s checkpoint so its next run starts at --to (minus the lookback).')
    .requiredOption('-s, --stream <name>', `stream (${STREAM_NAMES.join(', ')})`)
    .requiredOption('--to <date>', 'ISO 8601 date or datetime the stream restarts from')
    .option('--redeliver', 'also forget what was delivered, so records already sent are sent again')
    .addHelpText('after', '\nStop the daemon first: a running stream would overwrite the new checkpoint with its own.')
    .action(async (options: { stream: string; to: string; redeliver?: boolean }, command: Command) => {
      if (!isStreamName(options.stream)) {
        throw new UsageError(`--stream: unknown stream "${options.stream}" (known: ${STREAM_NAMES.join(', ')})`);
      }
      const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(options.to) ? `${options.to}T00:00:00Z` : options.to);
      if (Number.isNaN(ms)) throw new UsageError(`--to: expected an ISO 8601 date or datetime, got "${options.to}"`);
      const at = new Date(ms).toISOString();
      const definition = streamByName(options.stream);
      const runtime = await prepareCommand(command);
      await withApp(runtime, { withConnectors: false }, async (app) => {
        const cursor = definition.resetCursor(app.config.api.variant, at);
        await app.db.transaction().execute(async (trx) => {
          if (cursor === null) await app.stores.checkpoints.delete(definition.name, trx);
          else await app.stores.checkpoints.set(definition.name, cursor, definition.cursorSchema, trx);
          if (options.redeliver) await app.stores.seen.forget(definition.name, trx);
        });
        process.stdout.write(
          cursor === null
            ? `${definition.name}: checkpoint cleared (a snapshot stream re-reads its whole list)\n`
            : `${definition.name}: next run starts at ${at} minus the lookback${options.redeliver ? '; delivered records will be sent again' : ''}\n`,
        );
      });
    });
}
