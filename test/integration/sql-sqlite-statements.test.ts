import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlConnector, sqlOptionsSchema } from '../../connectors/sql/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { batchOf, record } from '../helpers/records.js';
import { mappersOf, thingsMapping as things } from '../helpers/mappers.js';

/** The SQL sink on SQLite prepares each statement text once, not per query (src/util/sqlite-statements.ts). */
const prepare = Database.prototype.prepare;
let dir: string | undefined;
afterEach(() => {
  Database.prototype.prepare = prepare;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('SQL sink on SQLite: prepared statements', () => {
  it('a second batch of the same shape prepares nothing new, and both land', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fs-sqlite-stmts-'));
    const sql: string[] = [];
    Database.prototype.prepare = function (this: Database.Database, source: string) {
      sql.push(source);
      return prepare.call(this, source);
    } as typeof prepare;
    const signal = new AbortController().signal;
    const instance = await sqlConnector.create(sqlOptionsSchema.parse({ dialect: 'sqlite', filename: path.join(dir, 'erp.sqlite') }), {
      instanceName: 'erp',
      logger: silentLogger(),
      baseDir: dir,
      mappings: mappersOf([['things', things]]),
    });
    try {
      await instance.init?.(signal);
      const batch = (n: number) =>
        batchOf('things', `b${n}`, [1, 2].map((i) => record('things', `t${n}-${i}`, { id: `t${n}-${i}`, text: `text ${n}`, parts: [{ name: 'a' }, { name: 'b' }] })));
      await instance.sink!.write(batch(1), signal);
      const afterFirst = sql.length;
      await instance.sink!.write(batch(2), signal);
      expect(sql.length).toBe(afterFirst);
      const check = new Database(path.join(dir, 'erp.sqlite'), { readonly: true });
      try {
        expect(check.prepare('select count(*) as n from things').get()).toEqual({ n: 4 });
        expect(check.prepare('select count(*) as n from thing_parts').get()).toEqual({ n: 8 });
      } finally {
        check.close();
      }
    } finally {
      await instance.close?.();
    }
  });
});
