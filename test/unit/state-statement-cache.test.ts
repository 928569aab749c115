import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { reportStorageProblems } from '../../src/state/storage-guard.js';

describe('state database: prepared statements reused per SQL text', () => {
  it('prepares a text once, keeps results right across reuse, and bounds what it keeps', () => {
    const raw = new Database(':memory:');
    let prepared = 0;
    const prepare = raw.prepare.bind(raw);
    raw.prepare = ((source: string) => {
      prepared++;
      return prepare(source);
    }) as typeof raw.prepare;
    const db = reportStorageProblems(raw, ':memory:');
    try {
      db.prepare('create table t (k text primary key, v integer)').run();
      const insert = 'insert into t (k, v) values (?, ?)';
      for (let i = 0; i < 10; i++) db.prepare(insert).run(`k${i}`, i);
      expect(db.prepare('select sum(v) as total from t').get()).toEqual({ total: 45 });
      expect(db.prepare('select sum(v) as total from t').get()).toEqual({ total: 45 });
      expect(prepared).toBe(3);
      for (let i = 0; i < 300; i++) db.prepare(`select ${i} as n`).get();
      db.prepare(insert).run('again', 1);
      expect(prepared).toBe(304);
    } finally {
      raw.close();
    }
  });
});
