import type { StateStores } from '../state/stores/index.js';

export interface DeadLetter {
  id: number;
  erpKey: string;
  kind: string;
  attempts: number;
  error: string | null;
  origin: string;
  at: string;
}

export interface OutboundStatus {
  /** Outbox commands by state. */
  counts: Record<string, number>;
  /** Units whose results are not written back yet. */
  openUnits: number;
  /** The newest dead commands (see `freight-sync outbox list --state dead`). */
  deadLetters: DeadLetter[];
}

export async function collectOutboundStatus(stores: Pick<StateStores, 'outbox' | 'units'>, limit = 10): Promise<OutboundStatus> {
  const { outbox } = stores;
  const dead = await outbox.list({ states: ['dead'], limit });
  return {
    counts: await outbox.countsByState(),
    openUnits: await stores.units.countOpen(),
    deadLetters: dead.map((r) => ({
      id: r.id,
      erpKey: r.erp_key,
      kind: r.kind,
      attempts: r.attempts,
      error: r.last_error,
      origin: `${r.origin_source}:${r.origin_unit}#${r.origin_ref}`,
      at: r.finished_at ?? r.updated_at,
    })),
  };
}

export function renderOutboundStatus(status: OutboundStatus): string {
  const counts = Object.entries(status.counts);
  if (counts.length === 0) return '\noutbound: no commands yet\n';
  let out = `\noutbound commands: ${counts.map(([state, n]) => `${state} ${n}`).join(', ')}; units awaiting write-back: ${status.openUnits}\n`;
  if (status.deadLetters.length > 0) {
    out += `dead letters (newest ${status.deadLetters.length}; retry with: freight-sync outbox retry ID):\n`;
    for (const d of status.deadLetters) out += `  #${d.id} ${d.kind} ${d.erpKey} (${d.attempts} attempts, ${d.origin}): ${(d.error ?? '').slice(0, 140)}\n`;
  }
  return out;
}
