import { encodeCommand } from '../../src/outbound/command-codec.js';
import type { OutboundCommand } from '../../src/outbound/commands/command.js';
import type { OutboxStore } from '../../src/state/stores/outbox-store.js';

/** Puts a command into a real outbox as intake would: one row, pending, due now. */
export async function enqueue(
  outbox: OutboxStore,
  command: OutboundCommand,
  options: { loadGroup?: string; revision?: number; source?: string; unit?: string; ref?: string } = {},
): Promise<number> {
  const { payload, contentHash } = encodeCommand(command);
  return outbox.insertCommand({
    erpKey: command.erpKey,
    kind: command.kind,
    revision: options.revision ?? 1,
    loadGroup: options.loadGroup ?? ('target' in command && command.target && 'loadErpKey' in command.target ? command.target.loadErpKey : command.erpKey),
    payload,
    contentHash,
    origin: { source: options.source ?? 'test', unit: options.unit ?? 'unit-1', ref: options.ref ?? command.erpKey },
  });
}

export function createCommand(erpKey: string, body: Record<string, unknown> = {}): OutboundCommand {
  return { kind: 'create', erpKey, body: { type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'C1', shipper: ['S1'], ...body } };
}

export function statusCommand(erpKey: string, loadErpKey: string, status: 'PENDING' | 'AVAILABLE' = 'AVAILABLE'): OutboundCommand {
  return { kind: 'status', erpKey, target: { loadErpKey }, params: { status } };
}

export function updateCommand(erpKey: string, target: { referenceNumber: string } | { loadErpKey: string }, body: Record<string, unknown>): OutboundCommand {
  return { kind: 'update', erpKey, target, body };
}
