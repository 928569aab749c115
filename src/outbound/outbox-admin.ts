import type { OutboxRow } from '../state/tables.js';
import { CREATE_KINDS, RECONCILED_KINDS } from './commands/enums.js';
import { OutboxCommandError } from './errors.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';

export interface AdminOutcome {
  row: OutboxRow;
  /** Dependents requeued with it (commands of the same load blocked by a dead create). */
  requeued: number[];
  notes: string[];
}

/**
 * `outbox retry ID`: a dead (or cancelled, or waiting) command becomes due now with fresh
 * attempts. A create or upload that was ever sent is set to `reconciling`, so the load is looked
 * up before anything is sent again — retrying never risks a duplicate. Commands of the same load
 * that died only because this create was dead are requeued too.
 */
export async function retryCommand(outbox: OutboxStore, id: number): Promise<AdminOutcome> {
  const row = await outbox.get(id);
  if (!row) throw new OutboxCommandError(`outbox #${id} does not exist`);
  if (row.state === 'done') throw new OutboxCommandError(`outbox #${id} is done (load ${row.result_reference_number ?? '?'}); nothing to retry`);
  if (row.state === 'sending') throw new OutboxCommandError(`outbox #${id} is being sent right now; retry it once it settled`);
  const post = RECONCILED_KINDS.has(row.kind);
  const state = post && row.sent_at !== null ? 'reconciling' : 'pending';
  await outbox.update(id, { state, attempts: 0, next_attempt_at: new Date().toISOString(), finished_at: null });
  const requeued: number[] = [];
  if (CREATE_KINDS.has(row.kind)) {
    for (const later of await outbox.laterInGroup(row.load_group, row.id)) {
      if (later.state === 'dead' && later.last_error?.startsWith('blocked:')) {
        await outbox.update(later.id, { state: 'pending', attempts: 0, next_attempt_at: new Date().toISOString(), finished_at: null });
        requeued.push(later.id);
      }
    }
  }
  const notes = [state === 'reconciling' ? 'it was sent before: its result is looked up first and it is sent again only if absent' : 'it will be sent again'];
  return { row: (await outbox.get(id))!, requeued, notes };
}

/** `outbox cancel ID`: a command not yet done is given up; its request is written back as failed. */
export async function cancelCommand(outbox: OutboxStore, id: number): Promise<AdminOutcome> {
  const row = await outbox.get(id);
  if (!row) throw new OutboxCommandError(`outbox #${id} does not exist`);
  if (row.state === 'done' || row.state === 'cancelled') throw new OutboxCommandError(`outbox #${id} is already ${row.state}`);
  if (row.state === 'sending') throw new OutboxCommandError(`outbox #${id} is being sent right now; cancel it once it settled`);
  const notes: string[] = [];
  if (row.state === 'reconciling') notes.push('its outcome was still unknown: the load may exist in the API');
  await outbox.update(id, { state: 'cancelled', finished_at: new Date().toISOString() });
  return { row: (await outbox.get(id))!, requeued: [], notes };
}
