import { describe, expect, it } from 'vitest';
import { parseRequest } from '../../src/outbound/commands/parse-request.js';

const create = { erp_key: 'K1', kind: 'create', type_of_load: 'import', preSetOrderStatus: '', caller: 'C1', shipper: 'S1;S2' };

describe('outbound request validation (before anything is sent)', () => {
  it('builds a main create with normalised values', async () => {
    const out = await parseRequest({ ...create, hazmat: 'YES', lastFreeDay: '2024-06-01', pricing: '[{"name":"Base"}]', _erp_note: 'ignored' }, { variant: 'main' });
    expect(out).toEqual({
      ok: true,
      command: { kind: 'create', erpKey: 'K1', body: { type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'C1', shipper: ['S1', 'S2'], hazmat: true, lastFreeDay: '2024-06-01T00:00:00.000Z', pricing: [{ name: 'Base' }] } },
    });
  });

  it('applies the brokerage differences of §4.4.1', async () => {
    expect(await parseRequest(create, { variant: 'brokerage' })).toEqual({ ok: false, error: 'consignee: is required' });
    const road = await parseRequest({ ...create, type_of_load: 'ROAD', consignee: 'N1', liquor: 'true', chassisNo: 'X' }, { variant: 'brokerage' });
    expect(road).toEqual({ ok: false, error: 'chassisNo: unknown field for kind create; liquor: is not applicable to road-only loads (type_of_load ROAD)' });
  });

  it('checks status changes per variant and accepts the staging table kind names', async () => {
    expect(await parseRequest({ erp_key: 'K1', kind: 'change_status', status: 'available' }, { variant: 'main' })).toEqual({
      ok: true,
      command: { kind: 'status', erpKey: 'K1', target: { loadErpKey: 'K1' }, params: { status: 'AVAILABLE' } },
    });
    expect(await parseRequest({ erp_key: 'K1', kind: 'status', reference_number: 'M1', status: 'Dispatched', arrivedOrDeparted: 'arrived' }, { variant: 'brokerage' })).toEqual({
      ok: true,
      command: { kind: 'status', erpKey: 'K1', target: { referenceNumber: 'M1' }, params: { status: 'Dispatched', arrivedOrDeparted: 'arrived' } },
    });
  });

  it('refuses targets on creates and long fields', async () => {
    expect(await parseRequest({ ...create, reference_number: 'M1' }, { variant: 'main' })).toEqual({ ok: false, error: 'reference_number: not accepted for kind create (the API assigns it)' });
    const long = await parseRequest({ ...create, officeNote: 'x'.repeat(70_000) }, { variant: 'main' });
    expect(long).toEqual({ ok: false, error: 'officeNote: 70000 characters, more than the 65536 a field may hold' });
  });

  it('reads document files only inside the inbox folder', async () => {
    const out = await parseRequest({ erp_key: 'D1', kind: 'document', documentType: 'Other', file: '../../etc/passwd' }, { variant: 'main', attachmentFolder: '/tmp/inbox' });
    expect(out).toEqual({ ok: false, error: 'file: "../../etc/passwd" points outside the inbox folder /tmp/inbox' });
  });
});
