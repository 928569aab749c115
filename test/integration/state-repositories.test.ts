import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Kysely } from 'kysely';
import { openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { accountKey } from '../../src/api/account-key.js';
import { InMemoryTokenStore, type TokenStore } from '../../src/api/token-store.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import { CheckpointStore } from '../../src/state/stores/checkpoint-store.js';
import { RunHistoryStore } from '../../src/state/stores/run-history-store.js';
import { SeenRecordStore } from '../../src/state/stores/seen-record-store.js';
import { StatementTexts } from '../../src/state/stores/statement-texts.js';
import { SyncSideStore } from '../../src/state/stores/sync-side-store.js';
import { QuarantineStore } from '../../src/state/stores/quarantine-store.js';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';
import type { StateTables } from '../../src/state/tables.js';
import type { StateDialect } from '../../src/state/db-clock.js';
import { freshStateDatabase, freshStateOn, stateDialects, type FreshState } from '../helpers/state-db.js';

const open: Kysely<StateTables>[] = [];
const disposable: FreshState[] = [];
async function fresh() {
  const handle = await freshStateDatabase();
  open.push(handle.db);
  return handle;
}
/** A fresh store of the dialect (a file, or a schema of its own on PostgreSQL). */
async function freshOn(dialect: StateDialect) {
  const handle = await freshStateOn(dialect);
  disposable.push(handle);
  return handle;
}
afterEach(async () => {
  for (const db of open.splice(0)) await db.destroy();
  for (const handle of disposable.splice(0)) await handle.dispose();
});

const DIALECTS = await stateDialects();

const TOKENS = { accessToken: 'access-1', refreshToken: 'refresh-1', accessExpiresAt: '2025-01-01T00:00:00.000Z' };

describe('SqlTokenStore', () => {
  it('keeps tokens across a reopen of the file', async () => {
    const { db, file } = await fresh();
    const account = accountKey('https://x/v1', 'brokerage', { clientId: 'c', clientSecret: 's' });
    await new SqlTokenStore(db).save(account, TOKENS);
    // Rotation replaces the pair.
    await new SqlTokenStore(db).save(account, { ...TOKENS, refreshToken: 'refresh-2' });
    await db.destroy();
    open.pop();

    const reopened = openStateDatabase(file);
    open.push(reopened);
    await migrateToLatest(reopened);
    const store = new SqlTokenStore(reopened);
    expect(await store.load(account)).toEqual({ ...TOKENS, refreshToken: 'refresh-2' });
    expect(await store.load('other')).toBeUndefined();
    await store.clear(account);
    expect(await store.load(account)).toBeUndefined();
  });

  it('has committed the save when it resolves (visible to another connection)', async () => {
    const { db, file } = await fresh();
    await new SqlTokenStore(db).save('acct', TOKENS);
    const other = new Database(file, { readonly: true });
    const row = other.prepare('select refresh_token from tokens where account = ?').get('acct') as { refresh_token: string };
    other.close();
    expect(row.refresh_token).toBe('refresh-1');
  });

  it('derives distinct account keys per base URL, variant and identity, without listing client ids or tokens', () => {
    const a = accountKey('https://x/v1', 'main', { clientId: 'c', clientSecret: 's' });
    expect(accountKey('https://x/v1', 'main', { clientId: 'c', clientSecret: 'other secret' })).toBe(a);
    expect(accountKey('https://y/v1', 'main', { clientId: 'c', clientSecret: 's' })).not.toBe(a);
    expect(accountKey('https://x/v1', 'brokerage', { clientId: 'c', clientSecret: 's' })).not.toBe(a);
    expect(accountKey('https://x/v1', 'main', { clientId: 'd', clientSecret: 's' })).not.toBe(a);
    expect(accountKey('https://x/v1', 'main', { clientId: 'client-abc', clientSecret: 's' })).not.toContain('client-abc');
    // A new pre-issued pair pasted into the config starts from it, not from the stored tokens.
    const pair = accountKey('https://x/v1', 'brokerage', { accessToken: 'a1', refreshToken: 'r1' });
    expect(accountKey('https://x/v1', 'brokerage', { accessToken: 'a1', refreshToken: 'r2' })).not.toBe(pair);
    expect(pair).not.toContain('r1');
  });

  it('InMemoryTokenStore behaves the same and returns copies', async () => {
    const store: TokenStore = new InMemoryTokenStore();
    const saved = { ...TOKENS };
    await store.save('a', saved);
    saved.accessToken = 'mutated';
    expect(await store.load('a')).toEqual(TOKENS);
    await store.clear('a');
    expect(await store.load('a')).toBeUndefined();
  });
});

describe.each(DIALECTS)('SqlTokenStore on %s', (dialect) => {
  it('saves, replaces (rotation), loads and clears per account', async () => {
    const { db } = await freshOn(dialect);
    const store = new SqlTokenStore(db);
    await store.save('acct', TOKENS);
    await store.save('acct', { ...TOKENS, refreshToken: 'refresh-2', accessExpiresAt: null });
    expect(await store.load('acct')).toEqual({ ...TOKENS, refreshToken: 'refresh-2', accessExpiresAt: null });
    expect(await store.load('other')).toBeUndefined();
    await store.clear('acct');
    expect(await store.load('acct')).toBeUndefined();
  });

  it('gives the refresh lock to one holder until it is released', async () => {
    const { db } = await freshOn(dialect);
    const store = new SqlTokenStore(db);
    expect(await store.acquireRefreshLock('acct', 'a', 60_000)).toBe(true);
    expect(await store.acquireRefreshLock('acct', 'b', 60_000)).toBe(false);
    expect(await store.acquireRefreshLock('acct', 'a', 60_000)).toBe(true);
    await store.releaseRefreshLock('acct', 'a');
    expect(await store.acquireRefreshLock('acct', 'b', 60_000)).toBe(true);
    await store.releaseRefreshLock('acct', 'b');
  });
});

describe.each(DIALECTS)('CheckpointStore on %s', (dialect) => {
  const cursorSchema = z.strictObject({ updatedAt: z.string(), seenIds: z.array(z.string()) });

  it('round-trips a cursor and lists and deletes it', async () => {
    const { db } = await freshOn(dialect);
    const checkpoints = new CheckpointStore(db, () => new Date('2025-02-03T04:05:06Z'));
    expect(await checkpoints.get('loads', cursorSchema)).toBeUndefined();
    const cursor = { updatedAt: '2025-01-01T00:00:00Z', seenIds: ['a', 'b'] };
    await checkpoints.set('loads', cursor, cursorSchema);
    await checkpoints.set('loads', { ...cursor, seenIds: ['c'] }, cursorSchema);
    expect(await checkpoints.get('loads', cursorSchema)).toEqual({ ...cursor, seenIds: ['c'] });
    expect(await checkpoints.list()).toEqual([
      { stream: 'loads', cursor: { ...cursor, seenIds: ['c'] }, updatedAt: '2025-02-03T04:05:06.000Z' },
    ]);
    expect(await checkpoints.delete('loads')).toBe(true);
    expect(await checkpoints.delete('loads')).toBe(false);
    expect(await checkpoints.get('loads', cursorSchema)).toBeUndefined();
  });

  it('names the stream when the stored JSON is broken or does not match the schema', async () => {
    const { db } = await freshOn(dialect);
    const checkpoints = new CheckpointStore(db);
    // Written behind the store's back, as a hand edit or an older version would.
    await db
      .insertInto('checkpoints')
      .values([
        { stream: 'invoices', cursor: '{not json', updated_at: 'x' },
        { stream: 'bills', cursor: '{"updatedAt":5}', updated_at: 'x' },
      ])
      .execute();
    await expect(checkpoints.get('invoices', cursorSchema)).rejects.toThrow(/checkpoint of stream "invoices" is not valid JSON/);
    await expect(checkpoints.get('bills', cursorSchema)).rejects.toThrow(/checkpoint of stream "bills" does not match its cursor schema: updatedAt/);
  });

  it('refuses to store a cursor its schema rejects', async () => {
    const { db } = await freshOn(dialect);
    const checkpoints = new CheckpointStore(db);
    await expect(checkpoints.set('loads', { updatedAt: 1 } as never, cursorSchema)).rejects.toThrow(/stream "loads"/);
    expect(await checkpoints.list()).toEqual([]);
  });

  it('joins a caller transaction: a rollback undoes the checkpoint', async () => {
    const { db } = await freshOn(dialect);
    const checkpoints = new CheckpointStore(db);
    const seen = new SeenRecordStore(db);
    await db
      .transaction()
      .execute(async (trx) => {
        await checkpoints.set('loads', { updatedAt: 'x', seenIds: [] }, cursorSchema, trx);
        await seen.remember('loads', [{ key: 'L1', hash: 'h1' }], trx);
        throw new Error('sink failed');
      })
      .catch(() => undefined);
    expect(await checkpoints.get('loads', cursorSchema)).toBeUndefined();
    expect(await seen.filterChanged('loads', [{ key: 'L1', hash: 'h1' }])).toEqual(['L1']);
  });
});

describe.each(DIALECTS)('RunHistoryStore on %s', (dialect) => {
  it('records runs and returns the last and the most recent', async () => {
    const { db } = await freshOn(dialect);
    const runs = new RunHistoryStore(db, () => new Date('2025-01-01T00:00:00Z'));
    const first = await runs.start('loads', 'run');
    const second = await runs.start('invoices', 'run');
    await runs.finish(first, { status: 'ok', records: 10, pages: 2, requests: 3 });
    await runs.finish(second, { status: 'failed', records: 0, pages: 0, requests: 1, error: 'HTTP 500' });
    const third = await runs.start('loads', 'backfill');

    expect(await runs.last('loads')).toMatchObject({ id: third, status: 'running', command: 'backfill', finishedAt: null });
    expect(await runs.last('invoices')).toMatchObject({ status: 'failed', error: 'HTTP 500', requests: 1 });
    expect((await runs.recent(2)).map((r) => r.id)).toEqual([third, second]);
    expect(await runs.last('bills')).toBeUndefined();
    await expect(runs.finish(9999, { status: 'ok', records: 0, pages: 0, requests: 0 })).rejects.toThrow(/run 9999/);
  });
});

describe.each(DIALECTS)('SeenRecordStore on %s', (dialect) => {
  it('returns only new or changed keys, across more keys than one statement may bind', async () => {
    const { db } = await freshOn(dialect);
    const seen = new SeenRecordStore(db);
    const items = Array.from({ length: 2500 }, (_, i) => ({ key: `L${i}`, hash: `h${i}` }));
    expect(await seen.filterChanged('loads', items)).toHaveLength(2500);
    await seen.remember('loads', items);

    const next = items.map((item, i) => (i % 500 === 0 ? { ...item, hash: 'changed' } : item));
    next.push({ key: 'NEW', hash: 'n' });
    expect(await seen.filterChanged('loads', next)).toEqual(['L0', 'L500', 'L1000', 'L1500', 'L2000', 'NEW']);
    // Another stream with the same keys is independent.
    expect(await seen.filterChanged('invoices', items.slice(0, 3))).toEqual(['L0', 'L1', 'L2']);

    await seen.remember('loads', next);
    expect(await seen.filterChanged('loads', next)).toEqual([]);
    const count = await db.selectFrom('seen_records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(2501);
  });

  it('runs page after page from kept statement texts, with the same answers (and leaves other streams alone)', async () => {
    const { db } = await freshOn(dialect);
    const texts = new StatementTexts();
    const seen = new SeenRecordStore(db, undefined, texts);
    const page = (n: number, hash: string) => Array.from({ length: 50 }, (_, i) => ({ key: `P${n}-${i}`, hash: `${hash}${i}` }));
    for (let n = 0; n < 4; n++) {
      expect(await seen.filterChanged('loads', page(n, 'a'))).toHaveLength(50);
      await seen.remember('loads', page(n, 'a'));
      // Again: nothing changed; then half of them changed.
      expect(await seen.filterChanged('loads', page(n, 'a'))).toEqual([]);
      const half = page(n, 'a').map((item, i) => (i % 2 ? { ...item, hash: 'b' } : item));
      expect(await seen.filterChanged('loads', half)).toEqual(half.filter((_, i) => i % 2).map((item) => item.key));
      await db.transaction().execute((trx) => seen.remember('loads', half, trx));
      expect(await seen.filterChanged('loads', half)).toEqual([]);
      expect(await seen.filterChanged('invoices', half)).toHaveLength(50);
    }
    const rows = await db.selectFrom('seen_records').select(['stream', 'key', 'content_hash']).where('key', 'like', 'P1-%').orderBy('key').execute();
    expect(rows).toHaveLength(50);
    expect(rows.filter((r) => r.content_hash === 'b')).toHaveLength(25);
    expect(texts.kept().sort()).toEqual(['seen-select:50', 'seen-upsert:50']);
  });

  it('keeps a bounded number of statement texts, and answers right past the bound', async () => {
    const { db } = await freshOn(dialect);
    const texts = new StatementTexts();
    const seen = new SeenRecordStore(db, undefined, texts);
    await seen.remember('loads', [{ key: 'K3', hash: 'h' }]);
    for (let n = 1; n <= 80; n++) {
      const items = Array.from({ length: n }, (_, i) => ({ key: `K${i}`, hash: 'h' }));
      expect(await seen.filterChanged('loads', items)).toEqual(items.map((item) => item.key).filter((key) => key !== 'K3'));
    }
    expect(texts.kept()).toHaveLength(64);
  });

  it('uses the last hash when a batch carries a key twice', async () => {
    const { db } = await freshOn(dialect);
    const seen = new SeenRecordStore(db);
    await seen.remember('loads', [{ key: 'A', hash: '1' }, { key: 'A', hash: '2' }]);
    expect(await seen.filterChanged('loads', [{ key: 'A', hash: '2' }])).toEqual([]);
    expect(await seen.filterChanged('loads', [{ key: 'A', hash: '1' }, { key: 'A', hash: '2' }])).toEqual([]);
  });
});

describe.each(DIALECTS)('SyncSideStore invoice candidates on %s', (dialect) => {
  it('adds each load once, page after page, from kept statement texts', async () => {
    const { db } = await freshOn(dialect);
    const texts = new StatementTexts();
    const side = new SyncSideStore(db, () => new Date('2025-01-01T00:00:00Z'), texts);
    const refs = (n: number) => Array.from({ length: 50 }, (_, i) => `M${n}-${i}`);
    for (let n = 0; n < 3; n++) {
      expect(await side.addInvoiceCandidates(refs(n), 'load status')).toBe(50);
      // Known already: none added, on the database or on a transaction.
      expect(await side.addInvoiceCandidates(refs(n), 'load status')).toBe(0);
      expect(await db.transaction().execute((trx) => side.on(trx).addInvoiceCandidates(refs(n), 'again'))).toBe(0);
    }
    const rows = await db.selectFrom('invoice_candidates').select(['load_reference_number', 'reason', 'last_error', 'created_at']).orderBy('load_reference_number').execute();
    expect(rows).toHaveLength(150);
    expect(new Set(rows.map((r) => `${r.reason}|${r.last_error}`))).toEqual(new Set(['load status|null']));
    expect(texts.kept().sort()).toEqual(['invoice-candidates:50', 'invoice-links:50']);
  });
});

describe.each(DIALECTS)('per-page lookups of the quarantine and the outbox on %s', (dialect) => {
  it('answer the same from kept statement texts, page after page', async () => {
    const { db } = await freshOn(dialect);
    const texts = new StatementTexts();
    const quarantine = new QuarantineStore(db, () => new Date('2025-01-01T00:00:00Z'), texts);
    const outbox = new OutboxStore(db, () => new Date('2025-01-01T00:00:00Z'), undefined, texts);
    const keys = (n: number) => Array.from({ length: 50 }, (_, i) => `K${n}-${i}`);
    const at = '2025-01-01T00:00:00.000Z';
    for (let n = 0; n < 3; n++) {
      await quarantine.recordSinkRefusals('loads', [{ key: `K${n}-7`, sink: 'erp', reason: 'no', raw: { n }, hash: `h${n}`, batchId: 'b' }]);
      await db
        .insertInto('outbox')
        .values([3, 5].map((i) => ({
          erp_key: `E${n}-${i}`, kind: 'create', revision: 1, load_group: `erp:E${n}-${i}`, payload: '{}', content_hash: 'c', state: 'done' as const, next_attempt_at: at,
          last_error: null, sent_at: at, result_reference_number: `K${n}-${i}`, result_load_id: null, result_note: null, origin_source: 's', origin_unit: 'u', origin_ref: 'r',
          created_at: at, updated_at: at, finished_at: at,
        })))
        .execute();
      for (let again = 0; again < 2; again++) {
        const held = await quarantine.entriesFor('loads', keys(n));
        expect([...held]).toEqual([[`K${n}-7`, [{ kind: 'sink', sink: 'erp', hash: `h${n}` }]]]);
        expect(await quarantine.entriesFor('invoices', keys(n))).toEqual(new Map());
        expect((await outbox.doneByReferences(keys(n))).map((row) => row.result_reference_number)).toEqual([`K${n}-5`, `K${n}-3`]);
      }
    }
    expect(texts.kept().sort()).toEqual(['outbox-done-refs:50', 'quarantine-held:50']);
  });
});
