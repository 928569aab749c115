import type { DryRunResult } from '../contracts/index.js';
import type { InboundEntry } from '../state/stores/unit-store.js';
import type { OutboxRow } from '../state/tables.js';
import { isFinalState } from '../state/outbox-states.js';
import { decodeCommand } from './command-codec.js';
import { resultOf } from './write-back.js';

/** The four original kinds read better with their own words; any other kind is worded from its name. */
const PHRASES: Readonly<Record<string, string>> = {
  create: 'create load',
  update: 'update load',
  status: 'change the status of load',
  document: 'upload a document to load',
};

/**
 * `would create load`, `would update load 1000123`, `would change the status of load erp_key
 * SO-1 to DISPATCHED`. A kind named `<noun>_<verb>` (`customer_create`, `load_delete`,
 * `invoice_create`) reads `would <verb> <noun>`, so kinds added later are worded without a change
 * here.
 */
export function wouldDo(row: Pick<OutboxRow, 'kind' | 'payload'>): string {
  const parts = row.kind.split('_');
  let text = `would ${PHRASES[row.kind] ?? (parts.length > 1 ? `${parts.at(-1)} ${parts.slice(0, -1).join(' ')}` : `send ${row.kind}`)}`;
  let command: Record<string, unknown>;
  try {
    command = decodeCommand(row.payload) as unknown as Record<string, unknown>;
  } catch {
    return text;
  }
  const target = command['target'] as { referenceNumber?: unknown; loadErpKey?: unknown } | undefined;
  if (typeof target?.referenceNumber === 'string') text += ` ${target.referenceNumber}`;
  else if (typeof target?.loadErpKey === 'string') text += ` erp_key ${target.loadErpKey}`;
  const params = command['params'] as { status?: unknown } | undefined;
  if (typeof params?.status === 'string') text += ` to ${params.status}`;
  return text;
}

function targetReference(row: OutboxRow): string | null {
  try {
    const target = (decodeCommand(row.payload) as unknown as { target?: { referenceNumber?: unknown } }).target;
    return typeof target?.referenceNumber === 'string' ? target.referenceNumber : null;
  } catch {
    return null;
  }
}

export interface EntryContext {
  /** Outbox rows the entries point at, by id (read inside the rehearsal). */
  rows: ReadonlyMap<number, OutboxRow>;
  /** Ids of the rows the rehearsal itself inserted: commands a real push would add now. */
  rehearsed: ReadonlySet<number>;
  checkedAt: string;
}

/**
 * What a real push would write back for one request, from the intake's entry for it: its
 * rejection, a new command (`would …`), the duplicate of a command of this same run, or the
 * duplicate of a command stored before (whose outcome it would share: done, dead, still queued).
 */
export function dryRunResultOf(entry: InboundEntry, context: EntryContext): DryRunResult {
  const base = { ref: entry.ref, checkedAt: context.checkedAt, referenceNumber: null, outboxId: null };
  const row = entry.outboxId === null ? undefined : context.rows.get(entry.outboxId);
  if (!row) return { ...base, status: 'failed', outcome: 'error', error: entry.error ?? 'rejected' };
  if (context.rehearsed.has(row.id)) {
    const same = entry.note === null ? '' : ` (duplicate of ref ${row.origin_ref}: sent once)`;
    return { ...base, status: 'ok', outcome: `${wouldDo(row)}${same}`, error: null, referenceNumber: targetReference(row) };
  }
  if (!isFinalState(row.state)) {
    return { ...base, status: 'ok', outcome: `already queued (outbox #${row.id}, ${row.state})`, error: null, outboxId: row.id, referenceNumber: row.result_reference_number };
  }
  const earlier = resultOf(entry.ref, row);
  return {
    ...base,
    status: earlier.status === 'done' ? 'ok' : 'failed',
    outcome: earlier.status === 'done' ? `already done (outbox #${row.id})` : 'error',
    error: earlier.error ?? null,
    referenceNumber: earlier.referenceNumber ?? null,
    outboxId: row.id,
  };
}
