import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import { openState } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { createStores } from '../../src/state/stores/index.js';
import { dropPostgresSchema, postgresStateLocation, postgresUrlForTests } from '../helpers/state-db.js';

/**
 * Several accounts in one process share one PostgreSQL pool (state.poolSize connections in all),
 * each store working in its own schema: a connection checked out by one account after another
 * must be switched to its schema, or one account's checkpoint would land in the other's tables.
 */
const POSTGRES = await postgresUrlForTests();
const schemas = [0, 1, 2, 3, 4].map(() => postgresStateLocation(POSTGRES ?? 'postgres://unused').schema);

afterAll(async () => {
  if (POSTGRES) for (const schema of schemas) await dropPostgresSchema(POSTGRES, schema);
});

describe.skipIf(POSTGRES === undefined)('a pool shared by the accounts of a process', () => {
  it('each store reads and writes its own schema through two shared connections; closing one leaves the other working', async () => {
    const [a, b] = await Promise.all(schemas.slice(0, 2).map((schema) => openState({ kind: 'postgres', url: POSTGRES!, schema, poolSize: 2 }, { sharedPool: true })));
    for (const db of [a!, b!]) await migrateToLatest(db, { location: 'test' });
    const [storeA, storeB] = [createStores(a!), createStores(b!)];
    // Interleaved and concurrent: connections pass from one schema to the other many times.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? storeA : storeB).checkpoints.set(`stream_${i % 4}`, { at: i }, z.object({ at: z.number() })),
      ),
    );
    const streamsOf = async (db: typeof a) => (await db!.selectFrom('checkpoints').select('stream').orderBy('stream').execute()).map((r) => r.stream);
    expect(await streamsOf(a)).toEqual(['stream_0', 'stream_2']);
    expect(await streamsOf(b)).toEqual(['stream_1', 'stream_3']);
    // One pool: both stores' connections are the same (at most poolSize) backends.
    const backends = async (db: typeof a) => new Set(await Promise.all(Array.from({ length: 6 }, async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.05)`.execute(db!)).rows[0]!.pid)));
    const [pidsA, pidsB] = await Promise.all([backends(a), backends(b)]);
    expect(new Set([...pidsA, ...pidsB]).size).toBeLessThanOrEqual(2);
    await a!.destroy();
    expect(await streamsOf(b)).toEqual(['stream_1', 'stream_3']);
    await b!.destroy();
  });

  it('a store that waits for a connection of the full pool gets one when it frees, instead of failing after the connect timeout', async () => {
    // Connect timeout 300 ms; both connections busy for 1.5 s: pg-pool alone fails the third checkout at 300 ms.
    const open = (schema: string) => openState({ kind: 'postgres', url: POSTGRES!, schema, poolSize: 2 }, { sharedPool: true, connectTimeoutMs: 300 });
    const [busy, waiting] = [await open(schemas[2]!), await open(schemas[3]!)];
    try {
      const slow = [1, 2].map(() => sql`select pg_sleep(1.5)`.execute(busy));
      // Let both slow queries take the two connections first.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(waiting);
      expect(rows[0]!.schema).toBe(schemas[3]);
      await Promise.all(slow);
    } finally {
      await busy.destroy();
      await waiting.destroy();
    }
  });

  it('the lease pool is apart from the work pool: a query through it answers while every work connection is busy', async () => {
    const location = { kind: 'postgres' as const, url: POSTGRES!, schema: schemas[4]!, poolSize: 2 };
    const work = await openState(location, { sharedPool: true });
    const leases = await openState(location, { sharedPool: true, poolName: 'leases' });
    try {
      let released!: () => void;
      const hold = new Promise<void>((resolve) => (released = resolve));
      // Both work connections held inside transactions (the accounts' work on a loaded replica).
      const holders = [1, 2].map(() => work.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await hold;
      }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const answered = await Promise.race([
        sql<{ one: number }>`select 1 as one`.execute(leases).then((r) => r.rows[0]!.one),
        new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5_000)),
      ]);
      released();
      await Promise.all(holders);
      expect(answered).toBe(1);
    } finally {
      await work.destroy();
      await leases.destroy();
    }
  });
});
