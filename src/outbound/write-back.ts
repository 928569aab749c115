import type { CommandSource, InboundResult } from '../contracts/index.js';
import type { StateStores } from '../state/stores/index.js';
import type { OutboxRow } from '../state/tables.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { isFinalState } from '../state/outbox-states.js';
import type { UnitStore } from '../state/stores/unit-store.js';

export interface WriteBackStats {
  units: number;
  failedCalls: number;
}

/**
 * Puts results back where requests came from once EVERY request of a unit is final (design §3):
 * `done` with the load's reference number and id, or `failed` with the precise error. Units are
 * checked when one of their commands finishes, and all open ones on every poll (which covers a
 * crash between the last command finishing and the write-back). Calls are serialised, so two
 * commands finishing together never write a unit twice.
 */
export class WriteBack {
  readonly stats: WriteBackStats = { units: 0, failedCalls: 0 };
  private readonly units: UnitStore;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly warnedMissing = new Set<string>();
  private readonly pendingIds = new Set<number>();
  private queued: Promise<void> | undefined;

  constructor(
    private readonly stores: Pick<StateStores, 'units' | 'outbox'>,
    private readonly sources: ReadonlyMap<string, CommandSource>,
    private readonly logger: Logger,
    private readonly signal: AbortSignal,
  ) {
    this.units = stores.units;
  }

  /**
   * Units holding any of these (now final) commands. Calls made while a check is queued join it,
   * so a busy dispatcher checks a big unit a few times per second rather than once per command.
   */
  forCommands(ids: readonly number[]): Promise<void> {
    for (const id of ids) this.pendingIds.add(id);
    this.queued ??= this.serial(async () => {
      this.queued = undefined;
      const batch = [...this.pendingIds];
      this.pendingIds.clear();
      for (const unit of await this.units.openUnitsOf(batch)) await this.tryUnit(unit.source, unit.unitId);
    });
    return this.queued;
  }

  sweep(): Promise<void> {
    return this.serial(async () => {
      for (const unit of await this.units.openUnits()) await this.tryUnit(unit.source, unit.unitId);
    });
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async tryUnit(source: string, unitId: string): Promise<void> {
    const unit = await this.units.find(source, unitId);
    if (!unit || unit.state !== 'open') return;
    const target = this.sources.get(source);
    if (!target) {
      if (!this.warnedMissing.has(source)) this.logger.warn({ source }, `results of source ${source} cannot be written back: it is not among outbound.sources`);
      this.warnedMissing.add(source);
      return;
    }
    if ((await this.units.countOpenRequests(source, unitId)) > 0) return;
    const results = await this.resultsOf(source, unitId);
    if (!results) return;
    try {
      await target.writeBack(unitId, results, this.signal);
    } catch (error) {
      // Left open: the next sweep tries again.
      this.stats.failedCalls += 1;
      this.logger.error({ source, unit: unitId, err: error }, `writing results back to ${unit.location} failed: ${describeError(error)}`);
      return;
    }
    await this.units.markWritten(source, unitId);
    this.stats.units += 1;
  }

  /** Results of every request, or undefined while any is still open. */
  private async resultsOf(source: string, unitId: string): Promise<InboundResult[] | undefined> {
    const entries = await this.units.entries(source, unitId);
    const ids = [...new Set(entries.map((e) => e.outboxId).filter((id): id is number => id !== null))];
    const rows = new Map<number, OutboxRow>();
    for (const row of await this.stores.outbox.byIds(ids)) rows.set(row.id, row);
    const now = new Date().toISOString();
    const results: InboundResult[] = [];
    for (const entry of entries) {
      if (entry.outboxId === null) {
        results.push({ ref: entry.ref, status: 'failed', error: entry.error ?? 'rejected', referenceNumber: null, loadId: null, outboxId: null, finishedAt: now });
        continue;
      }
      const row = rows.get(entry.outboxId);
      if (!row || !isFinalState(row.state)) return undefined;
      results.push(resultOf(entry.ref, row));
    }
    return results;
  }
}

export function resultOf(ref: string, row: OutboxRow): InboundResult {
  const finishedAt = row.finished_at ?? row.updated_at;
  if (row.state === 'done') {
    return { ref, status: 'done', referenceNumber: row.result_reference_number, loadId: row.result_load_id, error: null, outboxId: row.id, finishedAt };
  }
  const error = row.state === 'cancelled' ? `cancelled by an operator (freight-sync outbox cancel ${row.id})` : (row.last_error ?? 'failed');
  return { ref, status: 'failed', referenceNumber: row.result_reference_number, loadId: row.result_load_id, error, outboxId: row.id, finishedAt };
}
