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
const schemas = [postgresStateLocation(POSTGRES ?? 'postgres://unused').schema, postgresStateLocation(POSTGRES ?? 'postgres://unused').schema];

afterAll(async () => {
  if (POSTGRES) for (const schema of schemas) await dropPostgresSchema(POSTGRES, schema);
});

describe.skipIf(POSTGRES === undefined)('a pool shared by the accounts of a process', () => {
  it('each store reads and writes its own schema through two shared connections; closing one leaves the other working', async () => {
    const [a, b] = await Promise.all(schemas.map((schema) => openState({ kind: 'postgres', url: POSTGRES!, schema, poolSize: 2 }, { sharedPool: true })));
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
});
