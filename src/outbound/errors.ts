import { FreightSyncError } from '../util/errors.js';

/** Another process (daemon or push) is dispatching the same outbox. */
export class OutboxBusyError extends FreightSyncError {
  constructor(holder: string, statePath: string) {
    super('OUTBOX_BUSY', `another freight-sync process (${holder}) is dispatching the outbox of ${statePath}; stop it or wait for it to finish`);
  }
}

/** An `outbox retry/cancel` on an id that does not exist or is in the wrong state. */
export class OutboxCommandError extends FreightSyncError {
  constructor(message: string) {
    super('OUTBOX_COMMAND', message);
  }
}
