import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import type { StateTables } from '../../src/state/tables.js';

/** A fresh folder per test; the database file lives in a subfolder to exercise mkdir. */
export function tempStatePath(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-state-'));
  return path.join(dir, 'nested', 'state.sqlite');
}

/** Opens and migrates a fresh database file. */
export async function freshStateDatabase(file = tempStatePath()): Promise<{ db: Kysely<StateTables>; file: string }> {
  const db = openStateDatabase(file);
  await migrateToLatest(db);
  return { db, file };
}
