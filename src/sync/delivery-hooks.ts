import type { StateStores } from '../state/stores/index.js';
import type { RawRecord } from './stream-definition.js';

/**
 * What other parts of the daemon add to a delivery, wired by the composition root so the engine
 * knows nothing of them (it must never import outbound): the outbound side marks loads it
 * pushed itself (echo marks) and keeps its customer directory from pulled customers.
 */
export interface DeliveryHooks {
  /** Adds to the raw records of a batch before they are keyed and hashed (the mark is content). */
  enrich?(stream: string, records: readonly RawRecord[]): Promise<RawRecord[]>;
  /** Runs inside the transaction that commits the batch's checkpoint (`tx` writes inside it). */
  inCommit?(stream: string, records: readonly RawRecord[], tx: StateStores): Promise<void>;
}
