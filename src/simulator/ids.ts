/**
 * Record ids look like Mongo ObjectIds (24 hex). They are built from a collection code, the seed and
 * the record position, zero-padded so that string order equals position order: base records and
 * records created later then sort consistently as the `_id` tie-breaker.
 */
const POSITION_HEX = 14;

const prefixes = new Map<number, string>();

function prefixOf(code: number, seed: number): string {
  const key = (code & 0xff) * 0x1_0000_0000 + (seed >>> 0);
  let prefix = prefixes.get(key);
  if (prefix === undefined) {
    prefix = (code & 0xff).toString(16).padStart(2, '0') + (seed >>> 0).toString(16).padStart(8, '0');
    prefixes.set(key, prefix);
  }
  return prefix;
}

export function makeId(code: number, seed: number, position: number): string {
  return prefixOf(code, seed) + position.toString(16).padStart(POSITION_HEX, '0');
}

/** Inverse of makeId; undefined when the id is not one of this collection's. */
export function parseId(code: number, seed: number, id: string): number | undefined {
  if (typeof id !== 'string' || id.length !== 10 + POSITION_HEX) return undefined;
  if (id.slice(0, 10) !== prefixOf(code, seed)) return undefined;
  const hex = id.slice(10);
  if (!/^[0-9a-f]+$/.test(hex)) return undefined;
  return parseInt(hex, 16);
}

export const COLLECTION_CODES = {
  loads: 0x10,
  customers: 0x20,
  consignees: 0x21,
  invoices: 0x30,
  bills: 0x40,
  supportMoves: 0x50,
  audits: 0x60,
  documents: 0x70,
  chargeCodes: 0x80,
  misc: 0x90,
} as const;
