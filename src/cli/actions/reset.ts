import { describeStateLocation, stateLocationOf } from '../../state/state-location.js';
import type { Command } from 'commander';
import { UsageError } from '../../util/errors.js';
import { STREAM_NAMES, isStreamName } from '../../config/stream-names.js';
import { streamByName } from '../../sync/streams/index.js';
import { assertNoDaemon } from '../../app/daemon-ownership.js';
import { LeaseStore } from '../../state/leases/index.js';
import { prepareCommand, withApp } from '../runtime.js';

/** The work of `freight-sync reset` (options and help in commands/reset.ts, loaded only when it runs). */
export async function resetAction(options: { stream: string; to: string; redeliver?: boolean; force?: boolean }, command: Command): Promise<void> {
  if (!isStreamName(options.stream)) {
    throw new UsageError(`--stream: unknown stream "${options.stream}" (known: ${STREAM_NAMES.join(', ')})`);
  }
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(options.to) ? `${options.to}T00:00:00Z` : options.to);
  if (Number.isNaN(ms)) throw new UsageError(`--to: expected an ISO 8601 date or datetime, got "${options.to}"`);
  const at = new Date(ms).toISOString();
  const definition = streamByName(options.stream);
  const runtime = await prepareCommand(command);
  await withApp(runtime, { withConnectors: false }, async (app) => {
    // On a SQLite file the recorded daemon says it all (a SIGKILLed one frees it at once); on
    // PostgreSQL the replicas record no owner and a live account lease names the working one, as
    // it names a sync or backfill working beside the daemon on either.
    const location = stateLocationOf(app.config.state);
    if (options.force) await app.stores.daemonOwner.clear();
    else await assertNoDaemon(app.stores.daemonOwner, describeStateLocation(location), 'stop it before reset (it would overwrite the new checkpoint), or pass --force', app.account.leases, app.account.leaseKey);
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
}
