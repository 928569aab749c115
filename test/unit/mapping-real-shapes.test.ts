import { describe, expect, it } from 'vitest';
import { loadMapping, mapBatch, parseMapping } from '../../src/mapping/index.js';
import { applyTransforms, TransformError } from '../../src/mapping/transforms.js';
import { transformSchema } from '../../src/mapping/mapping-schema.js';
import type { CompiledTransform } from '../../src/mapping/compile-mapping.js';
import { parsePath } from '../../src/mapping/path.js';
import { ConfigError } from '../../src/util/errors.js';
import { batchOf, fixture, record } from '../helpers/records.js';

const t = (input: unknown): CompiledTransform => {
  const parsed = transformSchema.parse(input) as CompiledTransform;
  return 'path' in parsed && parsed.path ? { ...parsed, elementPath: parsePath(parsed.path).segments } : parsed;
};
const run = (value: unknown, ...transforms: unknown[]) => applyTransforms(value, transforms.map(t));

describe('sum, same and ref transforms', () => {
  it('sum adds decimal strings and numbers exactly, keeping the widest scale', () => {
    expect(run(['0.10', '0.20'], 'sum')).toBe('0.30');
    expect(run([0.1, 0.2], 'sum')).toBe('0.3');
    expect(run([{ a: '1234567.89' }, { a: 0.01 }, { a: '-12.5' }], { type: 'sum', path: 'a' })).toBe('1234555.40');
    expect(run(['99999999999999999.99', '0.01'], 'sum')).toBe('100000000000000000.00');
    expect(run('7', 'sum')).toBe('7');
  });

  it('sum of a list with a missing amount is missing, never a partial total', () => {
    expect(run([{ a: '1' }, {}], { type: 'sum', path: 'a' })).toBeNull();
    expect(run([{ a: '1' }, { a: '' }], { type: 'sum', path: 'a' })).toBeNull();
    expect(run([], 'sum')).toBeNull();
  });

  it('sum rejects text that is not a decimal, naming it', () => {
    expect(() => run(['1', 'ten'], 'sum')).toThrow(TransformError);
    expect(() => run(['1', 'ten'], 'sum')).toThrow('"ten"');
  });

  it('same gives the value every present element agrees on, else null', () => {
    expect(run([{ s: 'PAID' }, { s: 'PAID' }, {}], { type: 'same', path: 's' })).toBe('PAID');
    expect(run([{ s: 'PAID' }, { s: 'BILLING' }], { type: 'same', path: 's' })).toBeNull();
    expect(run([{ c: { _id: 'x', n: 1 } }, { c: { _id: 'x', n: 1 } }], { type: 'same', path: 'c' })).toEqual({ _id: 'x', n: 1 });
    expect(run([{}, { s: '' }], { type: 'same', path: 's' })).toBeNull();
  });

  it('ref reads an embedded object id, passes a bare id and joins lists', () => {
    expect(run({ _id: 'c1', company_name: 'Acme' }, 'ref')).toBe('c1');
    expect(run('c1', 'ref')).toBe('c1');
    expect(run(['c1', { _id: 'c2' }], 'ref')).toBe('c1;c2');
    expect(run([], 'ref')).toBeNull();
    expect(run({ id: 7 }, { type: 'ref', field: 'id' })).toBe(7);
    expect(() => run([[1]], 'ref')).toThrow(TransformError);
  });
});

describe('column fallback', () => {
  const mapping = parseMapping('invoices', {
    table: 'invoices',
    key: ['record_key'],
    columns: [
      { name: 'record_key', path: '$key' },
      { name: 'status', path: 'status', fallback: [{ path: 'invoice', transform: { type: 'same', path: 'status' } }] },
      { name: 'total', path: 'totalAmount', transform: 'number', fallback: [{ path: 'invoice', transform: { type: 'sum', path: 'totalAmount' } }] },
      { name: 'note', path: 'note', fallback: [{ path: 'alt' }] },
    ],
  });
  const map = (data: Record<string, unknown>) => {
    const { batch, errors } = mapBatch(batchOf('invoices', 'b', [record('invoices', 'K', data)]), mapping);
    expect(errors).toEqual([]);
    return batch.tables[0]!.rows[0]!;
  };

  it('uses the path when it has a value, the first fallback with a value otherwise', () => {
    expect(map({ status: 'BILLING', totalAmount: 5, invoice: [{ status: 'PAID', totalAmount: '1' }] })).toMatchObject({ status: 'BILLING', total: 5 });
    expect(map({ status: '', invoice: [{ status: 'PAID', totalAmount: '1.25' }, { totalAmount: 2 }] })).toMatchObject({ status: 'PAID', total: 3.25 });
  });

  it('keeps what the path gave when no fallback has a value', () => {
    expect(map({ note: '', alt: null })).toMatchObject({ note: '', status: null, total: null });
  });

  it('rejects a fallback on a column without a path', () => {
    expect(() => parseMapping('x', { table: 'x', key: ['k'], columns: [{ name: 'k', default: 'a', fallback: [{ path: 'b' }] }] })).toThrow(ConfigError);
    expect(() => parseMapping('x', { table: 'x', key: ['k'], columns: [{ name: 'k', path: 'a', fallback: [{ path: 'b..c' }] }] })).toThrow(/columns\[0\]\.fallback\[0\]\.path: invalid path "b..c"/);
  });
});

/** An invoice shaped as real payloads have it: header fields only inside the entries, money as bare numbers. */
function realInvoice(): Record<string, unknown> {
  const entry = (ref: string, total: number, paid: number, remain: number) => ({
    load_reference_number: ref,
    reference_number: ref,
    status: 'PARTIAL_PAID',
    totalAmount: total,
    paidAmount: paid,
    remainAmount: remain,
    billingDate: '2024-03-01T10:00:00.000Z',
    caller: { _id: 'cust-9', company_name: 'Acme Imports' },
    payment_terms: 45,
    payment_terms_method: 'NET',
    invoiceDueDate: '2024-04-15T10:00:00.000Z',
    pricing: [],
  });
  return { _id: 'inv-9', total: 2, invoice: [entry('M1', 1234567.89, 0.1, 1234567.79), entry('M1_1', 0.2, 0.3, -0.1)], createdAt: '2024-03-01T10:00:00Z', updatedAt: '2024-03-02T10:00:00Z' };
}

describe('default mappings on real payload shapes', () => {
  it('fills invoice header columns from the entries, summing amounts exactly', async () => {
    for (const variant of ['main', 'brokerage']) {
      const mapping = await loadMapping('invoices', undefined, { baseDir: '/', variant });
      const { batch, errors } = mapBatch(batchOf('invoices', 'b', [record('invoices', 'inv-9', realInvoice())]), mapping);
      expect(errors).toEqual([]);
      expect(batch.tables[0]!.rows[0], variant).toMatchObject({
        status: 'PARTIAL_PAID',
        total_amount: '1234568.09',
        paid_amount: '0.40',
        remain_amount: '1234567.69',
        billing_date: '2024-03-01T10:00:00.000Z',
        caller_id: 'cust-9',
        caller_name: 'Acme Imports',
        payment_terms: 45,
        payment_terms_method: 'NET',
        due_date: '2024-04-15T10:00:00.000Z',
      });
      const entries = batch.tables.find((table) => table.table === 'invoice_entries')!.rows;
      expect(entries.map((row) => [row.remain_amount, row.entry_payment_terms, row.due_date])).toEqual([
        ['1234567.79', 45, '2024-04-15T10:00:00.000Z'],
        ['-0.10', 45, '2024-04-15T10:00:00.000Z'],
      ]);
    }
  });

  it('keeps the spec-shaped invoice header as it was', async () => {
    const mapping = await loadMapping('invoices', undefined, { baseDir: '/', variant: 'main' });
    const { batch } = mapBatch(batchOf('invoices', 'b', [record('invoices', 'inv-1', fixture('invoice'))]), mapping);
    expect(batch.tables[0]!.rows[0]).toMatchObject({ status: 'PARTIAL_PAID', remain_amount: '1000.00' });
  });

  it('leaves a header status empty when the entries disagree', async () => {
    const mapping = await loadMapping('invoices', undefined, { baseDir: '/', variant: 'main' });
    const data = realInvoice();
    (data['invoice'] as Record<string, unknown>[])[1]!['status'] = 'FULL_PAID';
    const { batch } = mapBatch(batchOf('invoices', 'b', [record('invoices', 'inv-9', data)]), mapping);
    expect(batch.tables[0]!.rows[0]).toMatchObject({ status: null, total_amount: '1234568.09' });
  });

  it('understands shipper, consignee and caller as ids and as embedded objects on loads', async () => {
    const mapping = await loadMapping('loads', undefined, { baseDir: '/', variant: 'main' });
    const spec = { reference_number: 'M1', caller: { _id: 'c1', company_name: 'Caller' }, callerName: 'Caller', shipper: ['s1'], consignee: ['k1'], shipperName: 'Ship' };
    const real = { reference_number: 'M2', caller: 'c1', shipper: { _id: 's1', company_name: 'Ship' }, consignee: [{ _id: 'k1', company_name: 'Cons' }], totalAmount: '-12.50' };
    const { batch, errors } = mapBatch(batchOf('loads', 'b', [record('loads', 'M1', spec), record('loads', 'M2', real)]), mapping);
    expect(errors).toEqual([]);
    expect(batch.tables[0]!.rows.map((r) => [r.caller_id, r.caller_name, r.shipper_id, r.shipper_name, r.consignee_id, r.consignee_name])).toEqual([
      ['c1', 'Caller', 's1', 'Ship', 'k1', null],
      ['c1', null, 's1', 'Ship', 'k1', 'Cons'],
    ]);
    expect(batch.tables[0]!.rows[1]!.total_amount).toBe('-12.50');
  });

  it("maps customers' defaultPaymentTerms.days", async () => {
    const mapping = await loadMapping('customers', undefined, { baseDir: '/' });
    const { batch } = mapBatch(batchOf('customers', 'b', [record('customers', 'c1', { _id: 'c1', defaultPaymentTerms: { days: '30' } })]), mapping);
    expect(batch.tables[0]!.rows[0]).toMatchObject({ payment_terms: 30, default_payment_terms_days: 30 });
  });
});
