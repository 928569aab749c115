import type { OutboxStore } from '../state/stores/outbox-store.js';
import { withMember } from '../util/record-json.js';

/** Added to pulled loads this daemon created or changed (docs/outbound.md "Echo marking"). */
export interface EchoMark {
  origin: 'freight-sync';
  /** The newest done command on this load. */
  outboxId: number;
  erpKey: string;
  kind: string;
  /** When that command finished; a load `updatedAt` well after it means someone else changed it since. */
  pushedAt: string | null;
  /** The create, when this daemon created the load. */
  createdByOutboxId: number | null;
}

export const ECHO_FIELD = '_freightSync';

/**
 * Marks loads whose reference number the outbox knows as done: one batched state lookup per
 * delivered batch. The mark becomes part of the record (and its content hash), so the ERP can
 * tell its own echo from a change made by someone else.
 */
export async function markEchoes<T extends Record<string, unknown>>(outbox: Pick<OutboxStore, 'doneByReferences'>, records: readonly T[]): Promise<T[]> {
  const refs = records.map((r) => r['reference_number']).filter((v): v is string => typeof v === 'string' && v !== '');
  if (refs.length === 0) return [...records];
  const done = await outbox.doneByReferences(refs);
  if (done.length === 0) return [...records];
  const byRef = new Map<string, EchoMark>();
  for (const row of done) {
    const ref = row.result_reference_number as string;
    const mark = byRef.get(ref);
    // Rows come newest first: the first seen is the latest command.
    if (!mark) {
      byRef.set(ref, { origin: 'freight-sync', outboxId: row.id, erpKey: row.erp_key, kind: row.kind, pushedAt: row.finished_at, createdByOutboxId: row.kind === 'create' ? row.id : null });
    } else if (row.kind === 'create') {
      mark.createdByOutboxId = row.id;
    }
  }
  return records.map((record) => {
    const mark = typeof record['reference_number'] === 'string' ? byRef.get(record['reference_number']) : undefined;
    // A copy whose content hash covers the load as before, plus the mark (record-json.ts).
    return mark ? withMember(record, ECHO_FIELD, mark) : record;
  });
}
