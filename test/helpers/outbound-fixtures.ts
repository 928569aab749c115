import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

import type { ApiVariant } from '../../src/api/variant.js';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach } from 'vitest';
import { createStores, type StateStores } from '../../src/state/stores/index.js';
import type { StateTables } from '../../src/state/tables.js';
import { freshStateDatabase } from './state-db.js';

export const CSV_HEADER = ['erp_key', 'kind', 'type_of_load', 'preSetOrderStatus', 'caller', 'shipper', 'status'];
/** Brokerage creates require `consignee` (§4.4.1): its files carry the column. */
const BROKERAGE_HEADER = [...CSV_HEADER, 'consignee'];

export function csvKey(i: number): string {
  return `CSV-${String(i).padStart(5, '0')}`;
}

export function sqlKey(i: number): string {
  return `SQL-${String(i).padStart(5, '0')}`;
}

/**
 * An inbox CSV of `count` creates (ERP customer codes), then status changes for every tenth load:
 * AVAILABLE, and for every twentieth a later PENDING (a second revision, applied after the first).
 */
export function writeCreatesCsv(file: string, count: number, keyOf: (i: number) => string = csvKey, variant: ApiVariant = 'main'): void {
  const brokerage = variant === 'brokerage';
  const row = (cells: string[], consignee = '') => (brokerage ? [...cells, consignee] : cells).join(',');
  const lines = [(brokerage ? BROKERAGE_HEADER : CSV_HEADER).join(',')];
  for (let i = 1; i <= count; i++) lines.push(row([keyOf(i), 'create', i % 2 ? 'IMPORT' : 'EXPORT', '', 'CUS000001', 'CUS000002;CUS000003', ''], 'CON000001'));
  for (let i = 10; i <= count; i += 10) lines.push(row([keyOf(i), 'status', '', '', '', '', 'AVAILABLE']));
  for (let i = 20; i <= count; i += 20) lines.push(row([keyOf(i), 'status', '', '', '', '', 'PENDING']));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.part`, `${lines.join('\r\n')}\r\n`);
  fs.renameSync(`${file}.part`, file);
}

/** `count` create_load rows (and change_status for every tenth) into the SQL staging table. */
export function insertStagingCreates(filename: string, count: number, table = 'freight_outbound_requests', variant: ApiVariant = 'main'): void {
  const consignee = variant === 'brokerage' ? { consignee: ['CON000002'] } : {};
  const db = new Database(filename);
  try {
    const insert = db.prepare(`insert into ${table} (erp_key, kind, payload) values (?, ?, ?)`);
    db.transaction(() => {
      for (let i = 1; i <= count; i++) {
        insert.run(sqlKey(i), 'create_load', JSON.stringify({ type_of_load: 'ROAD', preSetOrderStatus: 'PULL_RETURN', caller: 'CUS000004', shipper: ['CUS000005'], ...consignee }));
      }
      for (let i = 10; i <= count; i += 10) insert.run(sqlKey(i), 'change_status', JSON.stringify({ status: 'AVAILABLE' }));
    })();
  } finally {
    db.close();
  }
}

export interface StagingRow {
  id: number;
  erp_key: string;
  kind: string;
  status: string;
  reference_number: string | null;
  error: string | null;
}

export function readStaging(filename: string, table = 'freight_outbound_requests'): StagingRow[] {
  const db = new Database(filename, { readonly: true });
  try {
    return db.prepare(`select id, erp_key, kind, status, reference_number, error from ${table} order by id`).all() as StagingRow[];
  } finally {
    db.close();
  }
}

/** Customer ids (24 hex digits: taken as API ids, no directory entry needed). */
export const CALLER = 'aaaaaaaaaaaaaaaaaaaaaaaa';
export const SHIPPER = 'bbbbbbbbbbbbbbbbbbbbbbbb';

/** An ERP load-create request row as an inbox or staging source hands it over. */
export const createRequest = (erpKey: string, extra: Record<string, unknown> = {}) => ({
  erp_key: erpKey,
  kind: 'create',
  type_of_load: 'IMPORT',
  preSetOrderStatus: '',
  caller: CALLER,
  shipper: [SHIPPER],
  ...extra,
});

/** A fresh migrated state database and its stores for every test of the file (closed after each). */
export function freshStoresPerTest(): { readonly db: Kysely<StateTables>; readonly stores: StateStores } {
  let db: Kysely<StateTables> | undefined;
  let stores: StateStores | undefined;
  beforeEach(async () => {
    ({ db } = await freshStateDatabase());
    stores = createStores(db);
  });
  afterEach(async () => {
    await db?.destroy();
  });
  return {
    get db() {
      return db!;
    },
    get stores() {
      return stores!;
    },
  };
}
