import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMapping, mapBatch, STREAM_NAMES } from '../../src/mapping/index.js';
import { ConfigError } from '../../src/util/errors.js';
import { batchOf, fixture, record } from '../helpers/records.js';

const prefix = ['connectors', 'erp', 'mappings', 'loads'];

async function configError(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('loadMapping', () => {
  it('reports schema errors with the full config path', async () => {
    const inline = { table: 'loads', key: ['id'], columns: [{ name: 'id', path: 'a' }, { name: 'b', path: 'b' }, { name: 'c', path: 'c' }, { name: 'd', path: 'd', transform: { type: 'uppercase' } }] };
    const error = await configError(loadMapping('loads', inline, { baseDir: '/', pathPrefix: prefix }));
    expect(error.issues[0]).toMatch(/^connectors\.erp\.mappings\.loads\.columns\[3\]\.transform\.type: /);
  });

  it('rejects unknown keys, bad paths, missing key columns and reserved names', async () => {
    const error = await configError(
      loadMapping('loads', { table: 'loads', key: ['nope'], colums: [], columns: [{ name: '_op', path: 'a..b' }] }, { baseDir: '/', pathPrefix: prefix }),
    );
    expect(error.issues.join('\n')).toContain('connectors.erp.mappings.loads.colums: unknown key');
    const semantic = await configError(loadMapping('loads', { table: 'loads', key: ['nope'], columns: [{ name: '_op', path: 'a..b' }] }, { baseDir: '/', pathPrefix: prefix }));
    const text = semantic.issues.join('\n');
    expect(text).toContain('connectors.erp.mappings.loads.columns[0].name: "_op" is reserved');
    expect(text).toContain('connectors.erp.mappings.loads.columns[0].path: invalid path "a..b"');
    expect(text).toContain('connectors.erp.mappings.loads.key[0]: key column "nope" is not a column of table loads');
  });

  it('rejects $index on the main table and "__" in table names', async () => {
    const error = await configError(loadMapping('x', { table: 'a__b', key: ['i'], columns: [{ name: 'i', path: '$index' }] }, { baseDir: '/' }));
    expect(error.issues.join('\n')).toMatch(/mappings\.x\.table: .*"__"/);
    expect(error.issues.join('\n')).toContain('$parent and $index exist only in child tables');
  });

  it('loads a mapping file relative to baseDir and applies its variant', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mapping-'));
    await writeFile(
      path.join(dir, 'm.yaml'),
      'table: things\nkey: [id]\ncolumns:\n  - { name: id, path: id }\n  - { name: who, path: driverName }\nvariants:\n  brokerage:\n    columns:\n      - { name: id, path: id }\n      - { name: who, path: carrierName }\n',
    );
    const main = await loadMapping('things', { file: 'm.yaml' }, { baseDir: dir, variant: 'main' });
    const brokerage = await loadMapping('things', { file: 'm.yaml' }, { baseDir: dir, variant: 'brokerage' });
    const data = { id: '1', driverName: 'D', carrierName: 'C' };
    expect(mapBatch(batchOf('things', 'b', [record('things', '1', data)]), main).batch.tables[0]!.rows[0]!.who).toBe('D');
    expect(mapBatch(batchOf('things', 'b', [record('things', '1', data)]), brokerage).batch.tables[0]!.rows[0]!.who).toBe('C');
    const missing = await configError(loadMapping('things', { file: 'nope.yaml' }, { baseDir: dir }));
    expect(missing.issues[0]).toContain('mappings.things.file: cannot read mapping file');
  });

  it('has a default mapping for every stream, in both variants', async () => {
    for (const stream of STREAM_NAMES) {
      for (const variant of ['main', 'brokerage']) {
        const mapping = await loadMapping(stream, undefined, { baseDir: '/', variant });
        expect(mapping.root.includeRaw, stream).toBe(true);
      }
    }
  });
});

describe('default mappings on realistic records', () => {
  it('maps a main load with its stops', async () => {
    const mapping = await loadMapping('loads', undefined, { baseDir: '/', variant: 'main' });
    const { batch, errors } = mapBatch(batchOf('loads', 'b', [record('loads', 'M000123', fixture('load-main'))]), mapping);
    expect(errors).toEqual([]);
    const load = batch.tables[0]!.rows[0]!;
    expect(load).toMatchObject({ record_key: 'M000123', reference_number: 'M000123', driver_name: 'José Álvarez', carrier_name: null, hot: true, tax_rate: '8.250000', vessel_eta: '2024-03-09T12:00:00.000Z', pickup_from_time: '2024-03-12T14:00:00.000Z', caller_id: 'cust-1' });
    expect(JSON.parse(load._raw as string)).toEqual(fixture('load-main'));
    const stops = batch.tables.find((t) => t.table === 'load_stops')!;
    expect(stops.rows.map((r) => [r.stop_no, r.type, r.city, r.lat])).toEqual([
      [0, 'PULLCONTAINER', 'Long Beach', 33.75],
      [1, 'DELIVERLOAD', 'Ontario', 34.06],
      [2, 'RETURNCONTAINER', 'Long Beach', 33.75],
    ]);
  });

  it('maps a brokerage load: carrierName and routingOrder', async () => {
    const mapping = await loadMapping('loads', undefined, { baseDir: '/', variant: 'brokerage' });
    const { batch, errors } = mapBatch(batchOf('loads', 'b', [record('loads', 'B000042', fixture('load-brokerage'))]), mapping);
    expect(errors).toEqual([]);
    expect(batch.tables[0]!.rows[0]).toMatchObject({ carrier_name: 'Fast Freight LLC', driver_name: null, allow_carrier_completion: false, milestone_status: 'outgated' });
    expect(batch.tables[1]!.rows.map((r) => [r.stop_no, r.company_name, r.is_gray_pool, r.priority])).toEqual([
      [0, 'Shipper A', true, 1],
      [1, 'Receiver B', false, 2],
    ]);
  });

  it('maps an invoice with entries, nested pricing lines and payments', async () => {
    const mapping = await loadMapping('invoices', undefined, { baseDir: '/', variant: 'main' });
    const { batch, errors } = mapBatch(batchOf('invoices', 'b', [record('invoices', 'inv-1', fixture('invoice'))]), mapping);
    expect(errors).toEqual([]);
    const byName = Object.fromEntries(batch.tables.map((t) => [t.table, t]));
    expect(byName.invoices!.rows[0]).toMatchObject({ status: 'PARTIAL_PAID', load_reference_numbers: 'M000123;M000124', remain_amount: '1000.00' });
    expect(byName.invoice_entries!.rows.map((r) => r.reference_number)).toEqual(['INV-123', 'INV-124']);
    expect(byName.invoice_pricing_lines!.rows.map((r) => [r.entry_no, r.line_no, r.name, r.amount, r.unit, r.load_reference_number])).toEqual([
      [0, 0, 'Base Price', '1000.00', '1.0000', 'M000123'],
      [0, 1, 'Fuel', '250.00', null, 'M000123'],
      [1, 0, 'Chassis', '125.00', '2.0000', 'M000124'],
    ]);
    expect(byName.invoice_payments!.rows[0]).toMatchObject({ payment_amount: '500.00', payment_type: 'STANDARD', document_urls: 'https://files.example/a.pdf' });
  });

  it('maps a bill with charge sets and their pricing lines', async () => {
    const mapping = await loadMapping('bills', undefined, { baseDir: '/', variant: 'main' });
    const { batch, errors } = mapBatch(batchOf('bills', 'b', [record('bills', 'bill-1', fixture('bill'))]), mapping);
    expect(errors).toEqual([]);
    const [bills, sets, lines] = batch.tables;
    expect(bills!.rows[0]).toMatchObject({ bill_number: 'B-1001', load_numbers: 'M000123;M000124', customer_names: 'Acme Imports, Inc.', branch_names: 'West' });
    expect(sets!.rows.map((r) => r.charge_set_number)).toEqual(['CS-1', 'CS-2']);
    expect(lines!.rows).toEqual([expect.objectContaining({ charge_set_no: 0, line_no: 0, name: 'Line haul', amount: '800.00', load_number: 'M000123' })]);
  });

  it('keeps customer port passwords out of the raw JSON', async () => {
    const mapping = await loadMapping('customers', undefined, { baseDir: '/' });
    const { batch } = mapBatch(batchOf('customers', 'b', [record('customers', 'c1', { _id: 'c1', company_name: 'X', portPassword: 'p4ssw0rd!' })]), mapping);
    expect(batch.tables[0]!.rows[0]!._raw).not.toContain('p4ssw0rd!');
  });

  it('maps load document types ({ name })', async () => {
    const mapping = await loadMapping('loadDocumentTypes', undefined, { baseDir: '/' });
    const { batch } = mapBatch(batchOf('loadDocumentTypes', 'b', [record('loadDocumentTypes', 'Bill of Lading', { name: 'Bill of Lading' })]), mapping);
    expect(batch.tables[0]!.rows[0]).toMatchObject({ name: 'Bill of Lading' });
  });
});
