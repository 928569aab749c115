import type { ApiClient } from '../api/api-client.js';
import { deleteLoad, getLoad } from '../api/endpoints/loads.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';
import type { OutboxRow } from '../state/tables.js';
import { describeRejection, httpStatusOf } from './classify-failure.js';
import { afterIdempotentFailure, afterPostFailure, type StepOutcome } from './step-outcome.js';

/** "Not found" and "removed" (§7): after a lost answer, proof that the first attempt removed it. */
const GONE = new Set([404, 410]);

/**
 * `load_delete`: `DELETE /loads/<id>`, the id taken from the create that made the load or read
 * with `GET /loads/<reference_number>`. A delete whose answer was lost is sent again while
 * `reconciling`, and a 404 or 410 after any earlier attempt counts as done — that attempt removed
 * it. On the first attempt a 410 is done too (the load was already removed: the ERP's wish holds), a 404
 * is an error (no such load).
 */
export class LoadDeleteStep {
  constructor(
    private readonly client: ApiClient,
    private readonly outbox: OutboxStore,
    private readonly maxAttempts: number,
  ) {}

  async run(row: OutboxRow, target: { referenceNumber: string; loadId?: string | undefined }, signal: AbortSignal): Promise<StepOutcome> {
    const reconciling = row.state === 'reconciling';
    // An earlier attempt may have removed it (a lost answer, or an interruption before the row said so).
    const sentBefore = reconciling || row.attempts > 0;
    if (reconciling && row.attempts >= this.maxAttempts) return { type: 'dead', error: `removal not confirmed after ${row.attempts} attempts; last error: ${row.last_error ?? 'unknown'}` };
    let loadId = target.loadId ?? row.result_load_id ?? undefined;
    if (!loadId) {
      try {
        const load = await getLoad(this.client, target.referenceNumber, {}, signal);
        if (load.isDeleted === true) return this.gone(target.referenceNumber, load._id, reconciling, 410);
        loadId = load._id;
        // Kept on the row, so a repeat after a lost answer needs no look-up (the load may be gone by then).
        await this.outbox.update(row.id, { result_load_id: loadId });
      } catch (error) {
        const status = httpStatusOf(error);
        if (status !== undefined && GONE.has(status) && (sentBefore || status === 410)) return this.gone(target.referenceNumber, null, sentBefore, status);
        return afterIdempotentFailure(error, reconciling ? 'reconcile' : 'retry');
      }
    }
    await this.outbox.markSending(row.id, row.attempts + 1, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      await deleteLoad(this.client, loadId, signal, { idempotent: false });
      return { type: 'done', result: { referenceNumber: target.referenceNumber, loadId, note: 'removed' } };
    } catch (error) {
      const status = httpStatusOf(error);
      if (status !== undefined && GONE.has(status)) {
        if (sentBefore || status === 410) return this.gone(target.referenceNumber, loadId, sentBefore, status);
        return { type: 'dead', error: describeRejection(error) };
      }
      return afterPostFailure(error);
    }
  }

  private gone(referenceNumber: string, loadId: string | null, sentBefore: boolean, status: number): StepOutcome {
    const note = sentBefore ? `found removed after an earlier attempt (HTTP ${status})` : 'already removed before this command';
    return { type: 'done', result: { referenceNumber, loadId, note } };
  }
}
