import type { TruthResource } from '../../src/simulator/index.js';
import type { ChaosVariant } from './chaos-options.js';

/** A pulled stream the chaos run checks: its sink table, the simulator's truth and the key. */
export interface ChaosStream {
  readonly stream: string;
  readonly table: string;
  readonly truth: TruthResource;
  readonly key: (record: Record<string, unknown>) => string;
  /** Whether the truth record must arrive as a tombstone. */
  readonly isDeleted: (record: Record<string, unknown>) => boolean;
}

const deletedFlag = (r: Record<string, unknown>) => r['isDeleted'] === true;
const never = () => false;

const ALL: Record<string, ChaosStream & { variants: readonly ChaosVariant[] }> = {
  loads: { stream: 'loads', table: 'loads', truth: 'loads', key: (r) => String(r['reference_number']), isDeleted: deletedFlag, variants: ['main', 'brokerage'] },
  // customers/consignees also feed the outbound customer directory.
  customers: { stream: 'customers', table: 'customers', truth: 'customers', key: (r) => String(r['_id']), isDeleted: deletedFlag, variants: ['main', 'brokerage'] },
  consignees: { stream: 'consignees', table: 'consignees', truth: 'consignees', key: (r) => String(r['_id']), isDeleted: deletedFlag, variants: ['main', 'brokerage'] },
  invoices: { stream: 'invoices', table: 'invoices', truth: 'invoices', key: (r) => String(r['_id']), isDeleted: never, variants: ['main', 'brokerage'] },
  bills: { stream: 'bills', table: 'bills', truth: 'bills', key: (r) => String(r['billId']), isDeleted: never, variants: ['main'] },
  supportMoves: { stream: 'supportMoves', table: 'support_moves', truth: 'supportMoves', key: (r) => String(r['supportMoveNumber']), isDeleted: never, variants: ['main'] },
};

export function chaosStreams(variant: ChaosVariant): ChaosStream[] {
  return Object.values(ALL).filter((s) => s.variants.includes(variant));
}
