import fs from 'node:fs';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest, MIGRATION_TABLE } from '../../src/state/migrate.js';
import { MIGRATIONS } from '../../src/state/migrations/index.js';
import { StateError } from '../../src/state/errors.js';
import { durableCommit } from '../../src/state/durability.js';
import { freshStateDatabase, tempStatePath } from '../helpers/state-db.js';

const toClose: { destroy(): Promise<void> }[] = [];
afterEach(async () => {
  for (const db of toClose.splice(0)) await db.destroy();
});

describe('openStateDatabase', () => {
  it('creates the folder and sets WAL, busy_timeout, foreign keys and synchronous', async () => {
    const file = tempStatePath();
    const db = openStateDatabase(file);
    toClose.push(db);
    expect(fs.existsSync(file)).toBe(true);
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`pragma ${name}`).execute(db)).rows[0] as Record<string, unknown>)[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('busy_timeout')).toBe(5000);
    expect(await pragma('foreign_keys')).toBe(1);
    expect(await pragma('synchronous')).toBe(1); // NORMAL
  });
});

describe('durableCommit', () => {
  it('runs the work with synchronous=FULL and restores NORMAL afterwards, even on failure', async () => {
    const db = openStateDatabase(tempStatePath());
    toClose.push(db);
    const synchronous = async () => Object.values((await sql.raw('pragma synchronous').execute(db)).rows[0] as object)[0];
    expect(await durableCommit(db, synchronous)).toBe(2); // FULL
    expect(await synchronous()).toBe(1);
    await expect(durableCommit(db, async () => { throw new Error('x'); })).rejects.toThrow('x');
    expect(await synchronous()).toBe(1);
  });
});

describe('migrateToLatest', () => {
  it('creates every table and is idempotent', async () => {
    const { db, file } = await freshStateDatabase();
    toClose.push(db);
    const second = await migrateToLatest(db);
    expect(second).toEqual([]);
    const tables = (await db.introspection.getTables()).map((t) => t.name).sort();
    expect(tables).toEqual(expect.arrayContaining(['checkpoints', 'runs', 'seen_records', 'tokens', MIGRATION_TABLE]));
    await db.destroy();
    toClose.pop();

    // A reopen (a daemon restart) applies nothing either.
    const reopened = openStateDatabase(file);
    toClose.push(reopened);
    expect(await migrateToLatest(reopened)).toEqual([]);
    const applied = await reopened.selectFrom(MIGRATION_TABLE as any).select('name' as any).execute();
    expect(applied.map((r: any) => r.name)).toEqual(Object.keys(MIGRATIONS));
  });

  it('refuses a database migrated by a newer version', async () => {
    const { db, file } = await freshStateDatabase();
    await db.destroy();
    const raw = new Database(file);
    raw.prepare(`insert into ${MIGRATION_TABLE} (name, timestamp) values (?, ?)`).run('9999-from-the-future', new Date().toISOString());
    raw.close();

    const reopened = openStateDatabase(file);
    toClose.push(reopened);
    const error = await migrateToLatest(reopened, { location: file }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateError);
    expect((error as Error).message).toContain('newer version of freight-sync');
    expect((error as Error).message).toContain('9999-from-the-future');
    expect((error as Error).message).toContain(file);
  });

  it('names the migration that failed', async () => {
    const db = openStateDatabase(tempStatePath());
    toClose.push(db);
    const broken = {
      ...MIGRATIONS,
      '0002-broken': { up: async () => { throw new Error('boom'); } },
    };
    await expect(migrateToLatest(db, { migrations: broken })).rejects.toThrow(/migration 0002-broken.*boom/);
  });
});

describe('migration 0005-quarantine', () => {
  it('moves what the old stores held (rejected_records, failed webhook events) into the one quarantine', async () => {
    const db = openStateDatabase(tempStatePath());
    toClose.push(db);
    const upTo0004 = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < '0005'));
    await migrateToLatest(db, { migrations: upTo0004 });
    await sql`insert into rejected_records (stream, batch_id, item_index, problem, raw, created_at) values ('bills', 'b1', 3, 'bad date', '{"x":1}', '2024-01-01T00:00:00.000Z')`.execute(db);
    await sql`insert into webhook_inbox (event_key, event_type, family, body, source, received_at, state, attempts, next_attempt_at, last_error)
      values ('event:1', 'load#updated', 'load', '{"a":1}', 'delivery', '2024-01-02T00:00:00.000Z', 'failed', 8, '2024-01-02T00:00:00.000Z', 'HTTP 500'),
             ('event:2', 'load#updated', 'load', '{"a":2}', 'delivery', '2024-01-02T00:00:00.000Z', 'done', 1, '2024-01-02T00:00:00.000Z', null)`.execute(db);
    await migrateToLatest(db);
    const rows = (await sql`select kind, stream, item_key, sink, reason, raw, attempts, webhook_event_id from quarantine order by id`.execute(db)).rows;
    expect(rows).toEqual([
      { kind: 'api-schema', stream: 'bills', item_key: 'b1#3#1', sink: '', reason: 'bad date', raw: '{"x":1}', attempts: 1, webhook_event_id: null },
      { kind: 'webhook', stream: 'webhook:load', item_key: 'event:1', sink: '', reason: 'HTTP 500', raw: '{"a":1}', attempts: 8, webhook_event_id: 1 },
    ]);
    expect((await db.introspection.getTables()).map((t) => t.name)).not.toContain('rejected_records');
  });
});
