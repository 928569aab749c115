import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { StorageError } from '../../src/util/storage-errors.js';
import { mountTinyFs, type TinyFs } from '../helpers/tiny-fs.js';

const mounted: TinyFs[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const fs of mounted.splice(0)) fs.unmount();
});

function tiny(label: string, sizeKb: number): TinyFs | undefined {
  const fs = mountTinyFs(label, sizeKb);
  if (fs) mounted.push(fs);
  return fs;
}

const never = () => new AbortController().signal;

async function rejection(work: Promise<unknown>): Promise<StorageError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageError);
  return error as StorageError;
}

describe('a full disk or read-only location is reported as such, with the path', () => {
  it('state database: a full disk inside a transaction is SQLITE_FULL naming the file, not "cannot rollback"', async () => {
    const fs = tiny('state-full', 1024);
    if (!fs) return;
    const file = path.join(fs.dir, 'state.sqlite');
    const db = openStateDatabase(file);
    cleanups.push(() => db.destroy());
    await migrateToLatest(db);
    await sql`create table filler (x text)`.execute(db);
    const error = await rejection(
      db.transaction().execute(async (trx) => {
        for (let i = 0; i < 1_000; i += 1) await sql`insert into filler values (${'x'.repeat(20_000)})`.execute(trx);
      }),
    );
    expect(error.kind).toBe('full');
    expect(error.message).toBe(`state database ${file}: no space left on the disk (free space, or move it to a larger volume) (SQLITE_FULL)`);
    // The transaction was rolled back by SQLite; the database is still usable for what fits.
    expect(await sql<{ n: number }>`select count(*) as n from filler`.execute(db).then((r) => r.rows[0]!.n)).toBe(0);
  });

  it('state database: a read-only location is named, for an existing file and a new one', async () => {
    const fs = tiny('state-ro', 1024);
    if (!fs) return;
    const file = path.join(fs.dir, 'state.sqlite');
    const db = openStateDatabase(file);
    await migrateToLatest(db);
    await db.destroy();
    fs.readOnly();
    for (const target of [file, path.join(fs.dir, 'new', 'state.sqlite'), path.join(fs.dir, 'other.sqlite')]) {
      let error: unknown;
      try {
        const reopened = openStateDatabase(target);
        cleanups.push(() => reopened.destroy());
        await migrateToLatest(reopened);
      } catch (e) {
        error = e;
      }
      expect(error, target).toBeInstanceOf(StorageError);
      expect((error as StorageError).kind).toBe('read-only');
      expect((error as Error).message).toMatch(new RegExp(`^state database ${target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the location is read-only .*\\((EROFS|SQLITE_READONLY\\w*)\\)$`));
    }
  });

  it('file drop: a full disk names the file being written', async () => {
    const fs = tiny('drop-full', 64);
    if (!fs) return;
    const target = new LocalTarget();
    await target.ensureDir(fs.dir);
    const error = await rejection(target.stage(fs.dir, 'loads__000001.csv', Buffer.alloc(256 * 1024, 'x'), never()));
    expect(error.kind).toBe('full');
    expect(error.message).toMatch(/^file drop .*loads__000001\.csv.*: no space left on the disk .*\(ENOSPC\)$/);
    expect(error.message).toContain(fs.dir);
  });

  it('file drop: a read-only folder is named', async () => {
    const fs = tiny('drop-ro', 64);
    if (!fs) return;
    fs.readOnly();
    const target = new LocalTarget();
    const out = path.join(fs.dir, 'out');
    const error = await rejection(target.ensureDir(out));
    expect(error.message).toBe(`file drop ${out}: the location is read-only (check the mount and the file permissions) (EROFS)`);
    const staged = await rejection(target.stage(fs.dir, 'loads__000002.csv', Buffer.from('a,b\r\n'), never()));
    expect(staged.kind).toBe('read-only');
  });
});
