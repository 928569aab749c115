import { compareStrings, lowerBound } from './sorted.js';
import { COLLECTION_CODES, makeId } from './ids.js';

/** Audit record (§2.9). */
export interface AuditRecord {
  _id: string;
  action: string;
  entityId: string;
  actorId: string;
  actorDetail: { name: string };
  createdAt: string;
  newData: Record<string, unknown>;
  oldData?: Record<string, unknown>;
}

export interface AuditQuery {
  fromMs: number;
  toMs: number;
  action?: string;
  entityId?: string;
  actorIds?: string[];
  limit: number;
  after?: { t: number; id: string };
}

/**
 * Audit log kept sorted by (createdAt, _id); pages by keyset so the opaque `pageToken` stays valid
 * while new audits are appended.
 */
export class AuditLog {
  readonly records: AuditRecord[] = [];
  private counter = 0;

  constructor(private readonly seed: number, private readonly salt: number) {}

  add(entry: Omit<AuditRecord, '_id'>): AuditRecord {
    const record: AuditRecord = { _id: makeId(COLLECTION_CODES.audits, this.seed, this.salt * 1e9 + this.counter++), ...entry };
    const key = Date.parse(record.createdAt);
    const at = lowerBound(0, this.records.length, (i) => {
      const r = this.records[i] as AuditRecord;
      const k = Date.parse(r.createdAt);
      return k > key || (k === key && compareStrings(r._id, record._id) > 0);
    });
    this.records.splice(at, 0, record);
    return record;
  }

  query(q: AuditQuery): { items: AuditRecord[]; next?: { t: number; id: string } } {
    let start = lowerBound(0, this.records.length, (i) => Date.parse((this.records[i] as AuditRecord).createdAt) >= q.fromMs);
    if (q.after) {
      const after = q.after;
      start = Math.max(
        start,
        lowerBound(0, this.records.length, (i) => {
          const r = this.records[i] as AuditRecord;
          const k = Date.parse(r.createdAt);
          return k > after.t || (k === after.t && compareStrings(r._id, after.id) > 0);
        }),
      );
    }
    const items: AuditRecord[] = [];
    let i = start;
    for (; i < this.records.length && items.length < q.limit; i++) {
      const r = this.records[i] as AuditRecord;
      if (Date.parse(r.createdAt) > q.toMs) break;
      if (q.action && r.action !== q.action) continue;
      if (q.entityId && r.entityId !== q.entityId) continue;
      if (q.actorIds && q.actorIds.length > 0 && !q.actorIds.includes(r.actorId)) continue;
      items.push(r);
    }
    const last = items[items.length - 1];
    // Another page exists only when we stopped because the page was full and more may follow.
    const more = items.length === q.limit && i < this.records.length && Date.parse((this.records[i] as AuditRecord).createdAt) <= q.toMs;
    return more && last ? { items, next: { t: Date.parse(last.createdAt), id: last._id } } : { items };
  }
}
