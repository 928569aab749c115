import type { Kysely } from 'kysely';
import type { Page, RejectedItem } from '../../src/api/paging.js';
import type { StateTables } from '../../src/state/tables.js';
import { SyncSideStore } from '../../src/state/stores/sync-side-store.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../../src/sync/stream-definition.js';
import { silentLogger } from '../../src/util/logger.js';
import type { FakeApi } from './fake-api.js';

/** Helpers shared by the unit tests of the pull strategies (src/sync/strategies). */

export const HOUR = 3_600_000;
export const T0 = Date.parse('2024-06-01T00:00:00.000Z');

export function at(ms: number): string {
  return new Date(ms).toISOString();
}

export function plan(overrides: Partial<RunPlan> = {}): RunPlan {
  return {
    mode: 'incremental',
    lookbackMs: 0,
    safetyLagMs: 0,
    initialFrom: at(T0),
    maxWindowMs: 24 * HOUR,
    minWindowMs: HOUR,
    ...overrides,
  };
}

/**
 * A StreamEnv around the fake API. Strategies that keep no side state never touch `side`; it is
 * a real SyncSideStore only when a database is given (invoices).
 */
export function env<T>(api: FakeApi, options: T, pageSize: number, db?: Kysely<StateTables>, now?: () => Date): StreamEnv<T> {
  return {
    client: api.asClient(),
    variant: api.variant,
    pageSize,
    options,
    logger: silentLogger(),
    side: db ? new SyncSideStore(db, now) : (new Proxy({}, { get: () => { throw new Error('side tables not expected here'); } }) as SyncSideStore),
  };
}

/** Reads every chunk; applies each chunk's afterCommit before asking for the next, as the runner does. */
export async function collect<C>(chunks: AsyncIterable<Chunk<C>>, side?: SyncSideStore): Promise<Array<Chunk<C>>> {
  const out: Array<Chunk<C>> = [];
  for await (const chunk of chunks) {
    out.push(chunk);
    if (side) for (const work of chunk.afterCommit ?? []) await work(side);
  }
  return out;
}

/** Like collect, but the read is expected to fail: returns the chunks delivered before the error and the error. */
export async function collectUntilError<C>(chunks: AsyncIterable<Chunk<C>>): Promise<{ chunks: Array<Chunk<C>>; error: unknown }> {
  const out: Array<Chunk<C>> = [];
  try {
    for await (const chunk of chunks) out.push(chunk);
  } catch (error) {
    return { chunks: out, error };
  }
  throw new Error(`expected the read to fail; it delivered ${out.length} chunks and ended`);
}

export function keysOf(chunks: Array<Chunk<unknown>>): string[] {
  return chunks.flatMap((c) => c.records.map((r) => String(r.id)));
}

/** A row of the in-memory server: `id` and the timestamp the strategy windows on. */
export interface Row extends RawRecord {
  id: string;
  t: string;
}

export function row(id: string, ms: number): Row {
  return { id, t: at(ms) };
}

export function page(items: RawRecord[], options: { count?: number; rejected?: RejectedItem[]; skip?: number } = {}): Page<RawRecord> {
  return { items, rejected: options.rejected ?? [], count: options.count, skip: options.skip, envelope: { data: items, count: options.count } };
}

/** The env of a snapshot read (strategies/snapshot.ts): `seen` is what the seen-records table holds, key → hash. */
export function snapshotEnv(seen: Map<string, string>): StreamEnv<unknown> {
  return {
    client: { clock: { now: () => new Date('2024-06-01T00:00:00Z') } },
    variant: 'main',
    pageSize: 50,
    options: {},
    logger: silentLogger(),
    side: { seenKeys: async () => seen },
  } as unknown as StreamEnv<unknown>;
}
