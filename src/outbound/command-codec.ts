import { createHash } from 'node:crypto';
import type { OutboundCommand } from './commands/command.js';

/** JSON with object keys sorted, so equal commands always serialise (and hash) equally. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

export function encodeCommand(command: OutboundCommand): { payload: string; contentHash: string } {
  const payload = stableJson(command);
  return { payload, contentHash: createHash('sha256').update(payload).digest('hex') };
}

export function decodeCommand(payload: string): OutboundCommand {
  return JSON.parse(payload) as OutboundCommand;
}
