import { createHash } from 'node:crypto';
import { z } from 'zod';
import { booleanValue } from '../../util/zod-values.js';
import type { RecordOp } from '../../contracts/index.js';
import type { RawRecord } from '../stream-definition.js';
import { REMOVED_MARKER } from '../strategies/snapshot.js';

/** Streams without options accept none (a typo in `options:` is an error, not ignored). */
export const noOptions = z.strictObject({});

export function stringField(record: RawRecord, ...names: string[]): string | null {
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return null;
}

/** The key of a record, or a clear error naming the stream and the fields looked at. */
export function requireKey(stream: string, record: RawRecord, ...names: string[]): string {
  if (record[REMOVED_MARKER] === true && typeof record.key === 'string') return record.key;
  const key = stringField(record, ...names);
  if (key === null) throw new Error(`stream ${stream}: record has none of the key fields ${names.join(', ')}`);
  return key;
}

/** Tombstone when the API marks the record deleted, or the snapshot diff found it gone. */
export function deletedFlagOp(record: RawRecord): RecordOp {
  return record.isDeleted === true || record[REMOVED_MARKER] === true ? 'delete' : 'upsert';
}

export function upsertOrRemovedOp(record: RawRecord): RecordOp {
  return record[REMOVED_MARKER] === true ? 'delete' : 'upsert';
}

/**
 * Audit records may come without an id: their identity is their content (they never change), so
 * the key is a digest of entity, action, actor, time and changes.
 */
export function auditKey(record: RawRecord): string {
  const id = stringField(record, '_id', 'id');
  if (id) return id;
  const digest = createHash('sha1')
    .update(JSON.stringify([record.entityId, record.action, record.actorId, record.createdAt, record.newData ?? null, record.oldData ?? null]))
    .digest('hex');
  return `audit-${digest.slice(0, 24)}`;
}

/** Option value from config: booleans may arrive as text through env interpolation (words: src/util/boolean.ts). */
export const booleanOption = booleanValue();
