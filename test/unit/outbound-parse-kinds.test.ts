import { describe, expect, it } from 'vitest';
import { parseRequest } from '../../src/outbound/commands/parse-request.js';

const customer = {
  erp_key: 'C-1',
  kind: 'customer_create',
  companyID: 'ACME',
  company_name: 'Acme',
  address1: '1 Main St',
  city: 'Springfield',
  state: 'IL',
  country: 'US',
  zip_code: '62701',
  isAddressVerified: 'yes',
};
const main = { variant: 'main' as const };
const brokerage = { variant: 'brokerage' as const };

function error(outcome: Awaited<ReturnType<typeof parseRequest>>): string | undefined {
  return outcome.ok ? undefined : outcome.error;
}

describe('outbound customer, delete and invoice kinds: validation before anything is sent', () => {
  it('builds a customer create: code defaults to erp_key, address built from the flat fields, geofence an object in main', async () => {
    const out = await parseRequest({ ...customer, geofence: '{"zoom":9,"center":[-89.6,39.8]}', credit_limit: 5000, balance: '12.5', customerType: '["caller"]' }, main);
    expect(out).toEqual({
      ok: true,
      command: {
        kind: 'customer_create',
        erpKey: 'C-1',
        customerCode: 'C-1',
        body: {
          companyID: 'ACME', company_name: 'Acme', address1: '1 Main St', city: 'Springfield', state: 'IL', country: 'US', zip_code: '62701', isAddressVerified: true,
          geofence: { zoom: 9, center: [-89.6, 39.8] }, credit_limit: '5000', balance: 12.5, customerType: ['caller'],
          address: { address: '1 Main St', address1: '1 Main St', city: 'Springfield', state: 'IL', country: 'US', zip_code: '62701' },
        },
      },
    });
    const coded = await parseRequest({ ...customer, erp_customer_code: 'ERP-77', address: { address: 'x', city: 'y' } }, main);
    expect(coded.ok && coded.command.kind === 'customer_create' && [coded.command.customerCode, coded.command.body['address']]).toEqual(['ERP-77', { address: 'x', city: 'y' }]);
  });

  it('applies the per-variant rules of §4.7', async () => {
    expect(error(await parseRequest(customer, brokerage))).toBe('main_contact_name: is required');
    expect(error(await parseRequest({ ...customer, main_contact_name: 'Jane', geofence: 'polygon-7' }, brokerage))).toBeUndefined();
    expect(error(await parseRequest({ ...customer, geofence: 'polygon-7' }, main))).toBe('geofence: expected an object as JSON text, got "polygon-7" (Unexpected token \'p\', "polygon-7" is not valid JSON)');
    expect(error(await parseRequest({ erp_key: 'C-1', kind: 'customer_update', geofence: 'polygon-7', payType: 'x' }, main))).toBe('payType: is not accepted by the main customer update (§4.7)');
    expect(error(await parseRequest({ erp_key: 'C-1', kind: 'customer_update', geofence: 'polygon-7', payType: 'x' }, brokerage))).toBeUndefined();
    expect(error(await parseRequest({ ...customer, externalSystemID: 'E1', main_contact_name: 'Jane' }, brokerage))).toBe('externalSystemID: unknown field for kind customer_create');
  });

  it('names every bad customer field, refuses secrets and misplaced columns', async () => {
    const { company_name: _n, city: _c, ...partial } = customer;
    expect(error(await parseRequest({ ...partial, isAddressVerified: 'maybe', compnay_name: 'Acme', password: 'hunter2' }, main))).toBe(
      'company_name: is required; city: is required; isAddressVerified: expected true or false, got "maybe"; password: is not accepted (secrets are not stored in the outbox); set it in the TMS; compnay_name: unknown field for kind customer_create (did you mean company_name?)',
    );
    expect(error(await parseRequest({ ...customer, reference_number: 'M1' }, main))).toBe(
      'reference_number: not accepted for kind customer_create (it addresses a load; customer commands name their customer by customer_id or erp_customer_code)',
    );
    expect(error(await parseRequest({ ...customer, customer_id: 'x' }, main))).toBe('customer_id: not accepted for kind customer_create (the API assigns it)');
    expect(error(await parseRequest({ erp_key: 'L1', kind: 'create', type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'C', shipper: 'S', erp_customer_code: 'C' }, main))).toBe(
      'erp_customer_code: not accepted for kind create (it names a customer; only customer_create and customer_update take it)',
    );
    expect(error(await parseRequest({ erp_key: 'C-1', kind: 'customer_update' }, main))).toBe('an update needs at least one field to change');
    expect(error(await parseRequest({ erp_key: 'C-1', kind: 'customer_update', customer_id: 'abc', erp_customer_code: 'X', mobile: '1' }, main))).toBe(
      'erp_customer_code: give either customer_id or erp_customer_code, not both',
    );
  });

  it('targets a customer update by id or by code', async () => {
    expect(await parseRequest({ erp_key: 'U-1', kind: 'update_customer', customer_id: '65f0a1b2c3d4e5f6a7b8c9d0', mobile: '555' }, main)).toEqual({
      ok: true,
      command: { kind: 'customer_update', erpKey: 'U-1', target: { customerId: '65f0a1b2c3d4e5f6a7b8c9d0' }, body: { mobile: '555' } },
    });
    expect(await parseRequest({ erp_key: 'C-1', kind: 'customer_update', account_hold: 'no' }, brokerage)).toEqual({
      ok: true,
      command: { kind: 'customer_update', erpKey: 'C-1', target: { customerCode: 'C-1' }, body: { account_hold: false } },
    });
  });

  it('builds load deletes from a reference number or an ERP key, and nothing else', async () => {
    expect(await parseRequest({ erp_key: 'D-1', kind: 'delete_load', reference_number: 'M1' }, main)).toEqual({ ok: true, command: { kind: 'load_delete', erpKey: 'D-1', target: { referenceNumber: 'M1' } } });
    expect(await parseRequest({ erp_key: 'SO-1', kind: 'load_delete' }, brokerage)).toEqual({ ok: true, command: { kind: 'load_delete', erpKey: 'SO-1', target: { loadErpKey: 'SO-1' } } });
    expect(error(await parseRequest({ erp_key: 'D-1', kind: 'load_delete', reference_number: 'M1', reason: 'dup' }, main))).toBe(
      'reason: unknown field(s) for kind load_delete (it takes only reference_number or load_erp_key)',
    );
  });

  it('builds invoice creates in main only, with the charge sets and the load they belong to', async () => {
    expect(await parseRequest({ erp_key: 'I-1', kind: 'invoice_create', chargeReferenceNumbers: 'M1;M1_1' }, main)).toEqual({
      ok: true,
      command: { kind: 'invoice_create', erpKey: 'I-1', body: { chargeReferenceNumbers: ['M1', 'M1_1'] } },
    });
    expect(await parseRequest({ erp_key: 'I-2', kind: 'create_invoice', chargeIds: '["a0"]', load_erp_key: 'SO-1' }, main)).toEqual({
      ok: true,
      command: { kind: 'invoice_create', erpKey: 'I-2', target: { loadErpKey: 'SO-1' }, body: { chargeIds: ['a0'] } },
    });
    expect(error(await parseRequest({ erp_key: 'I-1', kind: 'invoice_create', chargeReferenceNumbers: 'M1' }, brokerage))).toBe(
      'kind: invoice_create is not available on the brokerage variant (POST /invoices exists in main only, spec §4.2)',
    );
    expect(error(await parseRequest({ erp_key: 'I-1', kind: 'invoice_create' }, main))).toBe('chargeReferenceNumbers: is required (or chargeIds): the charge sets to invoice');
    expect(error(await parseRequest({ erp_key: 'I-1', kind: 'invoice_create', chargeIds: 'a0' }, main))).toBe(
      'reference_number: is required with chargeIds (or load_erp_key): an invoice whose answer was lost is looked up by its load',
    );
    expect(error(await parseRequest({ erp_key: 'I-1', kind: 'invoice_create', chargeRefs: 'M1' }, main))).toBe(
      'chargeRefs: unknown field for kind invoice_create (did you mean chargeIds?); chargeReferenceNumbers: is required (or chargeIds): the charge sets to invoice',
    );
  });
});
