import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlConnector, sqlOptionsSchema } from '../../connectors/sql/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { batchOf, record } from '../helpers/records.js';
import { mappersOf, thingsMapping as things } from '../helpers/mappers.js';

/**
 * The SQL sink on a SQLite file another writer holds (the ERP writing its staging table, another
 * replica): better-sqlite3 is synchronous, so waiting in SQLite's busy handler (10 s per attempt,
 * before) held the whole daemon — every account, the webhook receiver, lease renewals. The sink
 * now waits between attempts: the event loop keeps turning, and the batch lands once the lock is
 * free.
 */
let dir: string | undefined;
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('SQL sink on SQLite: another writer holds the file', () => {
  it('the sink waits without holding the event loop and writes once the lock is free', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fs-sqlite-lock-'));
    const file = path.join(dir, 'erp.sqlite');
    const signal = new AbortController().signal;
    const instance = await sqlConnector.create(sqlOptionsSchema.parse({ dialect: 'sqlite', filename: file }), {
      instanceName: 'erp',
      logger: silentLogger(),
      baseDir: dir,
      mappings: mappersOf([['things', things]]),
    });
    const erp = new Database(file);
    try {
      await instance.init?.(signal);
      erp.exec('BEGIN IMMEDIATE');
      // The ERP's transaction ends on the 20th turn of a 5 ms timer: only if the loop keeps turning.
      let turns = 0;
      let last = performance.now();
      let longestGapMs = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        longestGapMs = Math.max(longestGapMs, now - last);
        last = now;
        if (++turns === 20) erp.exec('COMMIT');
      }, 5);
      try {
        const ack = await instance.sink!.write(
          batchOf('things', 'b1', [1, 2].map((i) => record('things', `t${i}`, { id: `t${i}`, text: `text ${i}`, parts: [{ name: 'a' }] }))),
          signal,
        );
        expect(ack ? (ack.rejected ?? []) : []).toEqual([]);
      } finally {
        clearInterval(timer);
      }
      expect(turns).toBeGreaterThanOrEqual(20);
      // Waiting inside SQLite's busy handler held the loop for its whole busy_timeout (10 s) at
      // once; waiting between attempts, no turn is late by more than a scheduling hiccup.
      expect(longestGapMs).toBeLessThan(5_000);
      expect(erp.prepare('select count(*) as n from things').get()).toEqual({ n: 2 });
    } finally {
      if (erp.inTransaction) erp.exec('ROLLBACK');
      erp.close();
      await instance.close?.();
    }
  });
});
