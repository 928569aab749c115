import type { MappedBatch, RecordMappingError, Row } from '../../src/contracts/index.js';
import type { SyncRecord } from '../../src/contracts/index.js';
import { keyString, versionMillis } from './encode-row.js';
import type { StreamPlan } from './table-plan.js';

/**
 * One record as the unit of writing: its root row and every child row. A record lands whole or
 * not at all (row-by-row fallback works on groups), and its children are replaced together.
 */
export interface RecordGroup {
  readonly record: SyncRecord;
  /** Root key values (as mapped), and their text form for lookups. */
  readonly rootKey: readonly unknown[];
  readonly id: string;
  readonly op: 'upsert' | 'delete';
  readonly root: Row;
  /** Child rows by table plan name. */
  readonly children: ReadonlyMap<string, Row[]>;
}

/**
 * Groups the mapped rows by root key. `mapBatch` emits exactly one root row per record it did not
 * reject, in record order, which links each root row to its sync record. When a key occurs twice
 * in a batch, the newer version (then the later one) is kept, as the database would.
 */
export function groupRecords(batch: MappedBatch, records: readonly SyncRecord[], mappingErrors: readonly RecordMappingError[], plan: StreamPlan): RecordGroup[] {
  const rejected = new Set(mappingErrors.map((e) => e.record));
  const mappedRecords = records.filter((r) => !rejected.has(r));
  const rootTable = batch.tables.find((t) => t.table === plan.root.logical);
  const rootRows = rootTable?.rows ?? [];
  if (rootRows.length !== mappedRecords.length) {
    throw new Error(`internal: ${rootRows.length} root rows for ${mappedRecords.length} mapped records in batch ${batch.batchId}`);
  }

  const childPlan = (name: string) => plan.children.find((c) => c.name === name)!;
  const groups = new Map<string, { record: SyncRecord; rootKey: unknown[]; root: Row; children: Map<string, Row[]> }>();
  const order: string[] = [];
  rootRows.forEach((root, i) => {
    const record = mappedRecords[i]!;
    const rootKey = plan.root.key.map((k) => root[k] ?? null);
    const id = keyString(rootKey);
    const current = groups.get(id);
    if (current && isOlder(root, current.root)) return;
    if (!current) order.push(id);
    groups.set(id, { record, rootKey, root, children: new Map() });
  });

  for (const child of plan.children) {
    const rows = batch.tables.find((t) => t.table === child.logical)?.rows ?? [];
    for (const row of rows) {
      const id = keyString(child.rootKeyColumns.map((c) => row[c] ?? null));
      const group = groups.get(id);
      // A child of a superseded duplicate: its parent's newer version brought its own children.
      if (!group || row._synced_at !== group.root._synced_at || row._updated_at !== group.root._updated_at) continue;
      const list = group.children.get(child.name) ?? [];
      list.push(row);
      group.children.set(child.name, list);
    }
  }
  // Two copies of one record in a batch (same version) would insert each child twice: keep one per child key.
  for (const group of groups.values()) {
    for (const [table, rows] of group.children) {
      const plan = childPlan(table);
      const unique = new Map(rows.map((row) => [keyString(plan.key.map((k) => row[k] ?? null)), row]));
      if (unique.size !== rows.length) group.children.set(table, [...unique.values()]);
    }
  }
  return order.map((id) => {
    const g = groups.get(id)!;
    return { record: g.record, rootKey: g.rootKey, id, op: g.root._op === 'delete' ? 'delete' : 'upsert', root: g.root, children: g.children };
  });
}

function isOlder(candidate: Row, current: Row): boolean {
  const a = versionMillis(candidate._updated_at);
  const b = versionMillis(current._updated_at);
  return a !== null && b !== null && a < b;
}
