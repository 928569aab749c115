import { describe, expect, it } from 'vitest';
import { mapBatch, parseMapping, MappingError } from '../../src/mapping/index.js';
import { batchOf, record } from '../helpers/records.js';

const mapping = parseMapping('invoices', {
  table: 'invoices',
  key: ['record_key'],
  includeRaw: true,
  rawOmit: ['secret'],
  columns: [
    { name: 'record_key', path: '$key' },
    { name: 'status', path: 'status', default: 'UNKNOWN' },
    { name: 'billing_date', path: 'billingDate', transform: 'date' },
    { name: 'first_ref', path: 'invoice[0].reference_number' },
    { name: 'source', transform: { type: 'constant', value: 'api' } },
  ],
  children: [
    {
      table: 'invoice_entries',
      path: 'invoice',
      parentKey: { record_key: 'record_key' },
      key: ['record_key', 'entry_no'],
      columns: [
        { name: 'entry_no', path: '$index' },
        { name: 'reference_number', path: 'reference_number' },
        { name: 'invoice_status', path: '$parent.status' },
      ],
      children: [
        {
          table: 'invoice_pricing_lines',
          path: 'pricing',
          parentKey: { record_key: 'record_key', entry_no: 'entry_no', entry_ref: 'reference_number' },
          key: ['record_key', 'entry_no', 'line_no'],
          columns: [
            { name: 'line_no', path: '$index' },
            { name: 'amount', path: 'amount', transform: 'number' },
            { name: 'entry_status', path: '$parent.status' },
            { name: 'invoice_id', path: '$root._id' },
          ],
        },
      ],
    },
  ],
});

const invoice = (id: string, amount: unknown = '10.00', billingDate: unknown = '2024-03-20T00:00:00Z') => ({
  _id: id,
  status: 'BILLING',
  billingDate,
  secret: 'hunter22',
  invoice: [
    { reference_number: `${id}-A`, status: 'E1', pricing: [{ amount }, { amount: '5' }] },
    { reference_number: `${id}-B`, status: 'E2', pricing: [] },
  ],
});

describe('mapBatch', () => {
  it('maps parent, children and nested children with parent keys, $parent, $root and $index', () => {
    const { batch, errors } = mapBatch(batchOf('invoices', 'b1', [record('invoices', 'K1', invoice('I1'))]), mapping);
    expect(errors).toEqual([]);
    const [main, entries, lines] = batch.tables;
    expect(main?.rows[0]).toMatchObject({ record_key: 'K1', status: 'BILLING', billing_date: '2024-03-20T00:00:00.000Z', first_ref: 'I1-A', source: 'api', _op: 'upsert', _updated_at: '2024-03-12T15:04:05.000Z', _synced_at: '2024-03-13T00:00:00.000Z' });
    expect(entries?.rows.map((r) => [r.record_key, r.entry_no, r.reference_number, r.invoice_status])).toEqual([
      ['K1', 0, 'I1-A', 'BILLING'],
      ['K1', 1, 'I1-B', 'BILLING'],
    ]);
    expect(lines?.rows.map((r) => [r.record_key, r.entry_no, r.entry_ref, r.line_no, r.amount, r.entry_status, r.invoice_id])).toEqual([
      ['K1', 0, 'I1-A', 0, 10, 'E1', 'I1'],
      ['K1', 0, 'I1-A', 1, 5, 'E1', 'I1'],
    ]);
    expect(lines?.parent).toEqual({ table: 'invoice_entries', parentKeyColumns: ['record_key', 'entry_no', 'entry_ref'] });
    expect(lines?.columns).toEqual(['record_key', 'entry_no', 'entry_ref', 'line_no', 'amount', 'entry_status', 'invoice_id', '_op', '_updated_at', '_synced_at', '_run_id']);
  });

  it('gives every row exactly its table\'s columns, in column order, however many rows and whichever values (rows start from one shape)', () => {
    const records = [record('invoices', 'K1', invoice('I1')), record('invoices', 'K2', { _id: 'x' }), record('invoices', 'K3', invoice('I3', 'bad'))];
    const { batch } = mapBatch(batchOf('invoices', 'b1', records), mapping);
    for (const table of batch.tables) {
      expect(table.rows.length).toBeGreaterThan(0);
      for (const row of table.rows) {
        expect(Object.keys(row), table.table).toEqual(table.columns);
        expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      }
    }
    // Rows are separate objects: a sink changing one changes no other.
    const [first, second] = batch.tables[0]!.rows;
    first!.status = 'CHANGED';
    expect(second!.status).toBe('UNKNOWN');
  });

  it('adds the raw JSON, without omitted paths', () => {
    const { batch } = mapBatch(batchOf('invoices', 'b1', [record('invoices', 'K1', invoice('I1'))]), mapping);
    const raw = JSON.parse(batch.tables[0]!.rows[0]!._raw as string) as Record<string, unknown>;
    expect(raw._id).toBe('I1');
    expect(raw.invoice).toHaveLength(2);
    expect(raw).not.toHaveProperty('secret');
    expect(batch.tables[0]!.columns).toContain('_raw');
  });

  it('keeps columns stable when values are missing, and applies defaults', () => {
    const { batch } = mapBatch(batchOf('invoices', 'b1', [record('invoices', 'K2', { _id: 'x' })]), mapping);
    const row = batch.tables[0]!.rows[0]!;
    expect(row).toMatchObject({ status: 'UNKNOWN', billing_date: null, first_ref: null });
    expect(batch.tables[1]!.rows).toEqual([]);
    expect(batch.tables.map((t) => t.table)).toEqual(['invoices', 'invoice_entries', 'invoice_pricing_lines']);
  });

  it('maps a tombstone to a delete row from its last data, with no child rows', () => {
    const { batch, errors } = mapBatch(batchOf('invoices', 'b1', [record('invoices', 'K3', invoice('I3'), { op: 'delete' })]), mapping);
    expect(errors).toEqual([]);
    expect(batch.tables[0]!.rows).toEqual([expect.objectContaining({ record_key: 'K3', status: 'BILLING', _op: 'delete' })]);
    expect(batch.tables[1]!.rows).toEqual([]);
    expect(batch.tables[2]!.rows).toEqual([]);
  });

  it('leaves out a bad record whole, keeps the rest, and names stream, key, column and value', () => {
    const records = [
      record('invoices', 'GOOD1', invoice('G1')),
      record('invoices', 'M000123', invoice('BAD', 'lots', 'yesterday')),
      record('invoices', 'GOOD2', invoice('G2')),
    ];
    const { batch, errors } = mapBatch(batchOf('invoices', 'b1', records), mapping);
    expect(batch.tables[0]!.rows.map((r) => r.record_key)).toEqual(['GOOD1', 'GOOD2']);
    expect(batch.tables[2]!.rows.every((r) => r.invoice_id !== 'BAD')).toBe(true);
    expect(errors).toHaveLength(1);
    const [first, second] = errors[0]!.errors;
    expect(first).toBeInstanceOf(MappingError);
    expect(String(first)).toBe('MappingError: stream invoices, key M000123, column billing_date: cannot parse date "yesterday"');
    expect(second?.message).toBe('stream invoices, key M000123, column amount (table invoice_pricing_lines, element invoice[0].pricing[0]): cannot parse number "lots"');
  });

  it('reports an empty key column as an error', () => {
    const keyed = parseMapping('x', { table: 't', key: ['id'], columns: [{ name: 'id', path: 'id' }] });
    const { errors } = mapBatch(batchOf('x', 'b', [record('x', 'K', {})]), keyed);
    expect(errors[0]?.errors[0].message).toContain('column id: key column is empty');
  });

  it('turns a checkText rejection into a record error', () => {
    const { errors, batch } = mapBatch(batchOf('invoices', 'b', [record('invoices', 'K', { ...invoice('I'), status: '中' })]), mapping, {
      checkText: (text) => (/[^\u0000-\u00ff]/.test(text) ? 'not latin1' : undefined),
    });
    expect(batch.tables[0]!.rows).toEqual([]);
    expect(errors[0]?.errors[0].message).toContain('column status: not latin1');
  });
});
