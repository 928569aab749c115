import type { OutboxState } from './tables.js';

export const OUTBOX_STATES: readonly OutboxState[] = ['pending', 'sending', 'retry', 'reconciling', 'done', 'dead', 'cancelled'];
export const FINAL_STATES: readonly OutboxState[] = ['done', 'dead', 'cancelled'];
export const OPEN_STATES: readonly OutboxState[] = ['pending', 'sending', 'retry', 'reconciling'];

export function isFinalState(state: string): boolean {
  return (FINAL_STATES as readonly string[]).includes(state);
}
