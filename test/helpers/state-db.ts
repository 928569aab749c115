import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { openState, openStateDatabase } from '../../src/state/database.js';
import type { StateDialect } from '../../src/state/db-clock.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import type { StateLocation } from '../../src/state/state-location.js';
import type { StateTables } from '../../src/state/tables.js';
import { probePostgres, requireService } from './services.js';

/** A fresh folder per test; the database file lives in a subfolder to exercise mkdir. */
export function tempStatePath(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-state-'));
  return path.join(dir, 'nested', 'state.sqlite');
}

/**
 * Opens and migrates a fresh database file — or, in the `state-on-postgres` test project
 * (FREIGHT_SYNC_TEST_STATE=postgres, see vitest.config.ts), a fresh PostgreSQL schema, so the
 * store-heavy test files run unchanged against both dialects. Those schemas are dropped after the
 * file by test/setup/state-cleanup.ts.
 */
export async function freshStateDatabase(file?: string): Promise<{ db: Kysely<StateTables>; file: string }> {
  if (file === undefined && process.env.FREIGHT_SYNC_TEST_STATE === 'postgres') {
    const state = await freshStateOn('postgres');
    createdOnPostgres.push(state);
    return { db: state.db, file: `(postgres schema ${(state.location as { schema: string }).schema})` };
  }
  const path = file ?? tempStatePath();
  const db = openStateDatabase(path);
  await migrateToLatest(db);
  return { db, file: path };
}

const createdOnPostgres: FreshState[] = [];

/** Drops the schemas `freshStateDatabase` created on PostgreSQL (a test file's afterAll). */
export async function disposePostgresStates(): Promise<void> {
  for (const state of createdOnPostgres.splice(0)) await state.dispose().catch(() => undefined);
}

/* ------------------------------------------------------------------ both dialects */

let postgresUrl: Promise<string | undefined> | undefined;

/**
 * The state dialects to run a test file against: SQLite always, PostgreSQL when the server is up
 * (in CI a missing PostgreSQL fails the file; on a laptop it is skipped loudly). Call at the top
 * level of a test file: `describe.each(await stateDialects())(...)`.
 */
export async function stateDialects(): Promise<StateDialect[]> {
  const url = await testPostgresUrl();
  return url === undefined ? ['sqlite'] : ['sqlite', 'postgres'];
}

function testPostgresUrl(): Promise<string | undefined> {
  postgresUrl ??= probePostgres().then((probe) => (requireService('PostgreSQL (state store)', probe) ? probe.url : undefined));
  return postgresUrl;
}

export interface FreshState {
  db: Kysely<StateTables>;
  location: StateLocation;
  /** Closes the handle and removes what the test created (the file's folder, or the schema). */
  dispose(): Promise<void>;
}

/**
 * A fresh, migrated state store of the dialect: a new SQLite file, or a new PostgreSQL schema of
 * its own (unique name, dropped by `dispose`), so test files never see each other's rows.
 */
export async function freshStateOn(dialect: StateDialect): Promise<FreshState> {
  if (dialect === 'sqlite') {
    const file = tempStatePath();
    const location: StateLocation = { kind: 'sqlite', path: file };
    const db = await openState(location);
    await migrateToLatest(db);
    return { db, location, dispose: async () => void (await db.destroy()) };
  }
  const url = await testPostgresUrl();
  if (url === undefined) throw new Error('PostgreSQL is not available for the state store');
  const location = postgresStateLocation(url);
  const db = await openState(location);
  await migrateToLatest(db);
  // Dropped over a connection of its own: the test may have destroyed `db` already.
  return { db, location, dispose: () => dropPostgresState(db, url, location.schema) };
}

/** A PostgreSQL state location in a schema no other test uses. */
export function postgresStateLocation(url: string): Extract<StateLocation, { kind: 'postgres' }> {
  return { kind: 'postgres', url, schema: `fs_test_${randomBytes(6).toString('hex')}`, poolSize: 4 };
}

/** A PostgreSQL URL for tests that write `state.url` into a config (undefined: not available). */
export function postgresUrlForTests(): Promise<string | undefined> {
  return testPostgresUrl();
}

async function dropPostgresState(db: Kysely<StateTables>, url: string, schema: string): Promise<void> {
  await db.destroy().catch(() => undefined);
  await dropPostgresSchema(url, schema);
}

/** Drops a test schema by URL (for tests whose processes opened the store themselves). */
export async function dropPostgresSchema(url: string, schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}
