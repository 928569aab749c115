import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';
import { readStaging } from '../helpers/outbound-fixtures.js';
import { loadsByErpKey, outboundConfig, push, syncDirectory, withApp } from '../helpers/outbound-harness.js';
import { collectTruth, startSim, tempDir } from '../helpers/pull-harness.js';

const CUSTOMERS = 15;
const HEADER = [
  'erp_key', 'kind', 'erp_customer_code', 'companyID', 'company_name', 'address1', 'city', 'state', 'country', 'zip_code',
  'isAddressVerified', 'main_contact_name', 'type_of_load', 'preSetOrderStatus', 'caller', 'shipper', 'consignee',
];

function customerRow(k: number): string[] {
  return [`ERP-C${k}`, 'customer_create', `C-${k}`, `NEWCO-${k}`, `New Company ${k}`, `${k} Main St`, 'Springfield', 'IL', 'US', '62701', 'true', 'Jane Doe', '', '', '', '', ''];
}

function loadRow(k: number, j: number): string[] {
  // The caller is the ERP's code of a customer created by the same file.
  return [`L-${k}-${j}`, 'create', '', '', '', '', '', '', '', '', '', '', j % 2 ? 'IMPORT' : 'EXPORT', '', `C-${k}`, 'CUS000002', 'CON000001'];
}

function writeCsv(file: string, rows: string[][]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.part`, `${[HEADER, ...rows].map((r) => r.join(',')).join('\r\n')}\r\n`);
  fs.renameSync(`${file}.part`, file);
}

function resultsOf(inbox: string, file: string): Array<Record<string, string>> {
  for (const folder of ['processed', 'failed']) {
    const candidate = path.join(inbox, folder, `${file}.result.csv`);
    if (fs.existsSync(candidate)) return parse(fs.readFileSync(candidate, 'utf8'), { columns: true }) as Array<Record<string, string>>;
  }
  throw new Error(`no result file for ${file}`);
}

/**
 * Issue 15 acceptance: one inbox file holding new customers and three loads for each (named by
 * the ERP's customer code, some rows before the customer's own row), pushed against a simulator
 * that answers 20 % of creates ambiguously: every customer exists once, every load once with its
 * customer as caller, and every row's result is written back.
 */
describe.each(['main', 'brokerage'] as const)('customers from the ERP and loads naming them (%s)', (variant) => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({
      variant,
      loads: 100,
      customers: 10,
      consignees: 5,
      ambiguousCreateRate: 0.2,
      faults: { rate: 0.05, kinds: ['500', '502', '503', 'drop', 'truncated'], slowMs: 100 },
    });
  });
  afterAll(async () => sim.close());

  it('creates each customer once and its three loads once, results per row', async () => {
    const dir = tempDir(`outbound-customers-${variant}`);
    const inbox = path.join(dir, 'inbox');
    const config = outboundConfig({ sim, dir, connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox' } } }, outbound: { sources: ['erp_inbox'] } });
    await syncDirectory(config, dir);
    const rows: string[][] = [];
    for (let k = 1; k <= CUSTOMERS; k++) rows.push(loadRow(k, 1), loadRow(k, 2), customerRow(k), loadRow(k, 3));
    writeCsv(path.join(inbox, 'customers-and-orders.csv'), rows);

    const summary = await push(config, dir);
    expect(summary.sourceErrors).toEqual([]);
    expect(summary).toMatchObject({ invalid: 0, dead: 0, waiting: 0, commands: CUSTOMERS * 4 });
    expect(sim.stats().ambiguousCreates).toBeGreaterThan(0);

    const customers = (await collectTruth(sim, 'customers')).filter((c) => String(c['companyID']).startsWith('NEWCO-') && c['isDeleted'] !== true);
    const idOf = new Map<string, string>();
    for (let k = 1; k <= CUSTOMERS; k++) {
      const same = customers.filter((c) => c['companyID'] === `NEWCO-${k}`);
      expect(same, `customer NEWCO-${k}`).toHaveLength(1);
      idOf.set(`C-${k}`, String(same[0]!['_id']));
    }
    const keys = Array.from({ length: CUSTOMERS }, (_, i) => [1, 2, 3].map((j) => `L-${i + 1}-${j}`)).flat();
    const loads = await loadsByErpKey(sim, keys);
    for (const key of keys) {
      expect(loads.get(key), key).toHaveLength(1);
      const caller = loads.get(key)![0]!['caller'] as { _id: string };
      expect(caller._id).toBe(idOf.get(`C-${key.split('-')[1]}`));
    }

    const results = resultsOf(inbox, 'customers-and-orders.csv');
    expect(results).toHaveLength(rows.length);
    results.forEach((result, i) => {
      const row = rows[i]!;
      expect(result['status'], `row ${i + 1}: ${result['error']}`).toBe('done');
      if (row[1] === 'customer_create') expect(result['reference_number']).toBe(idOf.get(row[2]!));
      else expect(result['reference_number']).toBe(loads.get(row[0]!)![0]!['reference_number']);
    });
    // Each customer's create ran before the loads that name it (they waited for its id).
    await withApp(config, dir, async (app) => {
      const outbox = await new OutboxStore(app.db).list({ limit: 1000 });
      for (const row of outbox.filter((r) => r.kind === 'create')) {
        const k = row.erp_key.split('-')[1]!;
        const customer = outbox.find((r) => r.kind === 'customer_create' && r.erp_key === `ERP-C${k}`)!;
        expect(Date.parse(customer.finished_at!)).toBeLessThanOrEqual(Date.parse(row.finished_at!));
      }
    });
  });

  it('names the customer by its code in a later file, updates it by code, and rejects bad customer rows by field', async () => {
    const dir = tempDir(`outbound-customers-later-${variant}`);
    const inbox = path.join(dir, 'inbox');
    const config = outboundConfig({ sim, dir, connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox', pattern: ['*.json'] } } }, outbound: { sources: ['erp_inbox'] } });
    await syncDirectory(config, dir);
    const customer = { erp_key: 'LATER-1', kind: 'create_customer', companyID: 'LATERCO', company_name: 'Later Co', address1: '1 Dock Rd', city: 'Newark', state: 'NJ', country: 'US', zip_code: '07102', isAddressVerified: true, main_contact_name: 'Sam' };
    fs.writeFileSync(path.join(inbox, 'a.json'), JSON.stringify([customer]));
    expect(await push(config, dir)).toMatchObject({ invalid: 0, dead: 0 });

    fs.writeFileSync(
      path.join(inbox, 'b.json'),
      JSON.stringify([
        { erp_key: 'LATER-L1', kind: 'create', type_of_load: 'ROAD', preSetOrderStatus: '', caller: 'LATER-1', shipper: ['CUS000002'], consignee: ['CON000001'] },
        { erp_key: 'LATER-1-upd', kind: 'customer_update', erp_customer_code: 'LATER-1', mobile: '555-0100' },
        { erp_key: 'LATER-1', kind: 'customer_create', companyID: 'LATERCO', company_name: 'Changed Name', address1: 'x', city: 'x', state: 'x', country: 'US', zip_code: '1', isAddressVerified: true, main_contact_name: 'Sam' },
        { erp_key: 'OTHER-1', kind: 'customer_create', erp_customer_code: 'LATER-1', companyID: 'OTHERCO', company_name: 'Other', address1: 'x', city: 'x', state: 'x', country: 'US', zip_code: '1', isAddressVerified: true, main_contact_name: 'Sam' },
        { erp_key: 'BAD-1', kind: 'customer_update', erp_customer_code: 'NO-SUCH-CODE', mobile: '1' },
        { erp_key: 'BAD-2', kind: 'customer_create', companyID: 'BADCO', address1: 'x', city: 'x', state: 'x', country: 'US', zip_code: '1', isAddressVerified: 'maybe' },
      ]),
    );
    const summary = await push(config, dir);
    expect(summary).toMatchObject({ commands: 2, invalid: 4, dead: 0 });
    const results = resultsOf(inbox, 'b.json');
    const created = (await collectTruth(sim, 'customers')).filter((c) => c['companyID'] === 'LATERCO');
    expect(created).toHaveLength(1);
    expect(created[0]!['mobile']).toBe('555-0100');
    const load = (await loadsByErpKey(sim, ['LATER-L1'])).get('LATER-L1')!;
    expect((load[0]!['caller'] as { _id: string })._id).toBe(created[0]!['_id']);
    expect(results.map((r) => r['status'])).toEqual(['done', 'done', 'failed', 'failed', 'failed', 'failed']);
    expect(results[1]!['reference_number']).toBe(created[0]!['_id']);
    expect(results[2]!['error']).toMatch(/^erp_key: "LATER-1" was already received as a customer_create with different content \(outbox #\d+, done, [0-9a-f]{24}\); a customer is created once per ERP key: send the changes as kind customer_update$/);
    expect(results[3]!['error']).toMatch(/^erp_customer_code: "LATER-1" was already received as a customer_create under erp_key "LATER-1"/);
    expect(results[4]!['error']).toContain('erp_customer_code: unknown customer "NO-SUCH-CODE"');
    const missing = variant === 'brokerage' ? 'company_name: is required; main_contact_name: is required' : 'company_name: is required';
    expect(results[5]!['error']).toBe(`${missing}; isAddressVerified: expected true or false, got "maybe"`);
  });

  it('takes customer commands from the SQL staging table too (load row first, customer row after it)', async () => {
    const dir = tempDir(`outbound-customers-sql-${variant}`);
    const config = outboundConfig({
      sim,
      dir,
      connectors: { erp_sql: { type: 'sql', options: { dialect: 'sqlite', filename: 'erp.sqlite', staging: {} } } },
      outbound: { sources: ['erp_sql'] },
    });
    await syncDirectory(config, dir);
    const db = new Database(path.join(dir, 'erp.sqlite'));
    const insert = db.prepare('insert into freight_outbound_requests (erp_key, kind, payload) values (?, ?, ?)');
    insert.run('SQL-L1', 'create_load', JSON.stringify({ type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'SQL-CUST', shipper: ['CUS000002'], consignee: ['CON000001'] }));
    insert.run('SQL-CUST', 'create_customer', JSON.stringify({ companyID: 'SQLCO', company_name: 'Sql Co', address1: '9 Quay', city: 'Oakland', state: 'CA', country: 'US', zip_code: '94607', isAddressVerified: false, main_contact_name: 'Lee' }));
    db.close();
    expect(await push(config, dir)).toMatchObject({ invalid: 0, dead: 0, waiting: 0 });
    const customers = (await collectTruth(sim, 'customers')).filter((c) => c['companyID'] === 'SQLCO');
    expect(customers).toHaveLength(1);
    const load = (await loadsByErpKey(sim, ['SQL-L1'])).get('SQL-L1')!;
    expect((load[0]!['caller'] as { _id: string })._id).toBe(customers[0]!['_id']);
    expect(readStaging(path.join(dir, 'erp.sqlite')).map((r) => [r.erp_key, r.status, r.reference_number])).toEqual([
      ['SQL-L1', 'done', load[0]!['reference_number']],
      ['SQL-CUST', 'done', customers[0]!['_id']],
    ]);
  });
});
