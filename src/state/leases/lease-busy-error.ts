import { StateError } from '../errors.js';
import { describeHolder } from './holder-id.js';
import type { LeaseRow } from './lease-store.js';

/**
 * A one-shot command (`sync`, `backfill`) gave up waiting for the account's lease: another
 * process held it (or had asked for it first) for longer than `--lease-wait`. Names that process.
 */
export class LeaseBusyError extends StateError {
  readonly account: string;
  readonly holder: string | null;
  readonly epoch: number;
  /** When the holder's lease runs out unless renewed (database clock, ISO). */
  readonly heldUntil: string | null;
  constructor(account: string, row: LeaseRow | undefined, waitedFor: string) {
    const held = row?.holder ? row : undefined;
    const who = held
      ? `the lease of account ${account} is held by ${describeHolder(held.holder!, held.holderCommand)} (holder ${held.holder}, epoch ${held.epoch}, held until ${new Date(held.expiresAtMs).toISOString()})`
      : row?.request
        ? `${describeHolder(row.request.by, row.request.command)} asked for the lease of account ${account} first (holder ${row.request.by})`
        : `the lease of account ${account} did not come free`;
    const advice = held && held.holderCommand !== 'run' && held.holderCommand !== null
      ? 'that command keeps the account until it is done'
      : 'a `run` daemon hands over once its current batches finish';
    super('STATE_LEASE_BUSY', `${who}; gave up after waiting ${waitedFor} (--lease-wait): ${advice}; try again later or pass a longer --lease-wait`);
    this.account = account;
    this.holder = held?.holder ?? row?.request?.by ?? null;
    this.epoch = held?.epoch ?? row?.epoch ?? 0;
    this.heldUntil = held ? new Date(held.expiresAtMs).toISOString() : null;
  }
}
