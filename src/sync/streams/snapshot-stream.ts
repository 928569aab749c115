import type { PagedEndpoint } from '../../api/page-size.js';
import type { ApiVariant } from '../../api/variant.js';
import type { StreamName } from '../../config/stream-names.js';
import type { RawRecord, StreamDefinition, StreamEnv } from '../stream-definition.js';
import { readSnapshot, snapshotCursorSchema, type SnapshotCursor, type SnapshotRead } from '../strategies/snapshot.js';
import { noOptions, upsertOrRemovedOp } from './common.js';

export type SnapshotStream = StreamDefinition<SnapshotCursor, Record<string, never>>;

/**
 * A stream read as a whole list each run (src/sync/strategies/snapshot.ts): no options, no
 * position, removals as tombstones. Its records carry no `updatedAt`: a removal has no server
 * time, and a tombstone must win over the entry it removes in every sink, so the version of a
 * snapshot record is the run that delivered it (the entry's own dates stay in its data).
 */
export function snapshotStream(spec: {
  name: StreamName;
  description: string;
  variants: readonly ApiVariant[];
  pagedEndpoint?: PagedEndpoint;
  keyDescription: string;
  key: (record: RawRecord) => string;
  fetchAll: (env: StreamEnv<Record<string, never>>, signal: AbortSignal) => Promise<SnapshotRead>;
}): SnapshotStream {
  return {
    name: spec.name,
    description: spec.description,
    variants: spec.variants,
    pagedEndpoint: spec.pagedEndpoint ?? null,
    optionsSchema: noOptions,
    cursorSchema: snapshotCursorSchema,
    cursorKind: 'snapshot',
    keyDescription: spec.keyDescription,
    key: spec.key,
    op: upsertOrRemovedOp,
    updatedAt: () => null,
    resetCursor: () => null,
    read: (env, _cursor, _plan, signal) => readSnapshot(spec.name, (s) => spec.fetchAll(env, s), spec.key, env, signal),
  };
}
