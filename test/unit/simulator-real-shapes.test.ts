import { describe, expect, it } from 'vitest';
import { reshapeResponse, reshapeWebhookBody } from '../../src/simulator/real-shapes.js';
import { parseEvent } from '../../src/webhooks/webhook-event.js';

const invoice = {
  _id: 'i1',
  status: 'PARTIAL_PAID',
  totalAmount: 300.5,
  paidAmount: 250,
  remainAmount: 50.5,
  billingDate: '2024-03-01T00:00:00.000Z',
  caller: { _id: 'c1', company_name: 'Acme' },
  invoice: [
    { load_reference_number: 'M1', totalAmount: 200, paidAmount: 200, remainAmount: 0, pricing: [{ amount: '200.00' }] },
    { load_reference_number: 'M1', totalAmount: 100.5, paidAmount: 0, remainAmount: 100.5, pricing: [] },
  ],
};

describe('simulator realShapes', () => {
  it('moves invoice header fields into the entries, keeping the sums and allowing a negative remainder', () => {
    const shaped = reshapeResponse('GET /invoices', [invoice]) as Array<Record<string, unknown>>;
    expect(shaped[0]).not.toHaveProperty('status');
    expect(shaped[0]).not.toHaveProperty('paidAmount');
    const entries = shaped[0]!.invoice as Array<Record<string, unknown>>;
    expect(entries.map((e) => [e.status, e.totalAmount, e.paidAmount, e.remainAmount, e.caller])).toEqual([
      ['PARTIAL_PAID', 200, 2.5e2, -50, invoice.caller],
      ['PARTIAL_PAID', 100.5, 0, 100.5, invoice.caller],
    ]);
    expect((entries[0]!.pricing as Array<Record<string, unknown>>)[0]!.amount).toBe(200);
    expect(invoice.status).toBe('PARTIAL_PAID'); // the stored record is untouched
  });

  it('sends load money as strings and shipper/consignee embedded', () => {
    const load = { totalAmount: 12.5, shipper: ['s1'], shipperName: 'Ship', consignee: ['k1'], consigneeName: 'Cons' };
    expect(reshapeResponse('GET /loads/:ref', load)).toMatchObject({ totalAmount: '12.50', shipper: { _id: 's1', company_name: 'Ship' }, consignee: [{ _id: 'k1', company_name: 'Cons' }] });
  });

  it('sends webhook bodies with event_type, which the receiver reads like eventType', () => {
    const main = reshapeWebhookBody({ eventType: 'load#status_updated', reference_number: 'M1', changedValues: {} });
    expect(main).toMatchObject({ event_type: 'load#status_updated' });
    expect(main).not.toHaveProperty('eventType');
    expect(parseEvent(JSON.stringify(main))).toMatchObject({ eventType: 'load#status_updated', referenceNumber: 'M1' });
    const brokerage = reshapeWebhookBody({ eventType: 'load#status_updated', data: { eventType: 'load#status_updated', reference_number: 'B1', changedValues: {} } });
    expect(parseEvent(JSON.stringify(brokerage))).toMatchObject({ eventType: 'load#status_updated', referenceNumber: 'B1' });
    const invoiceEvent = reshapeWebhookBody({ eventType: 'invoice#payment_added', data: invoice, changedValues: { status: 'PARTIAL_PAID' } });
    expect(parseEvent(JSON.stringify(invoiceEvent))).toMatchObject({ family: 'invoice', referenceNumber: 'M1' });
  });
});
