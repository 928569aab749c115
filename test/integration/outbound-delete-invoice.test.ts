import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';
import { MemorySource } from '../helpers/memory-source.js';
import { loadsByErpKey, outboundConfig, push, syncDirectory, withApp } from '../helpers/outbound-harness.js';
import { collectTruth, startSim, tempDir } from '../helpers/pull-harness.js';

const create = (key: string) => ({ erp_key: key, kind: 'create', type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'CUS000001', shipper: 'CUS000002', consignee: 'CON000001' });

/**
 * Every write's answer is lost (`ambiguousCreateRate: 1`: the simulator applies each create and
 * delete, then answers 502 or drops the socket), so each command below reaches its result only
 * through the look-up after an ambiguous send — and must still take effect exactly once.
 */
describe.each(['main', 'brokerage'] as const)('load deletes and invoices when every answer is lost (%s)', (variant) => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ variant, loads: 60, customers: 10, consignees: 5, ambiguousCreateRate: 1 });
  });
  afterAll(async () => sim.close());

  it('deletes once and idempotently; invoices once (main)', async () => {
    const dir = tempDir(`outbound-delete-${variant}`);
    const config = outboundConfig({ sim, dir });
    await syncDirectory(config, dir);
    const source = new MemorySource();
    const customer = { erp_key: 'CU-1', kind: 'customer_create', companyID: 'LOSTCO', company_name: 'Lost Answers Co', address1: '1 Pier', city: 'Long Beach', state: 'CA', country: 'US', zip_code: '90802', isAddressVerified: true, main_contact_name: 'Ana' };
    source.add('loads.json', [create('DI-1'), create('DI-2'), create('DI-3'), create('DI-4'), customer, { ...create('DI-5'), caller: 'CU-1' }]);
    expect(await push(config, dir, [{ name: 'mem', source }])).toMatchObject({ dead: 0, waiting: 0 });
    // The customer too was created by its first send only, and the load got its id.
    const lostCo = (await collectTruth(sim, 'customers')).filter((c) => c['companyID'] === 'LOSTCO');
    expect(lostCo).toHaveLength(1);
    expect(((await loadsByErpKey(sim, ['DI-5'])).get('DI-5')![0]!['caller'] as { _id: string })._id).toBe(lostCo[0]!['_id']);
    const loads = await loadsByErpKey(sim, ['DI-1', 'DI-2', 'DI-3', 'DI-4']);
    const ref = (key: string) => String(loads.get(key)![0]!['reference_number']);
    const id = (key: string) => String(loads.get(key)![0]!['_id']);

    const later = [
      // By the ERP key of its create (id known from the outbox), and by reference number (id looked up).
      { erp_key: 'DI-1', kind: 'load_delete' },
      { erp_key: 'DEL-2', kind: 'delete_load', reference_number: ref('DI-2') },
      { erp_key: 'DEL-404', kind: 'load_delete', reference_number: 'M9999999' },
    ];
    if (variant === 'main') {
      later.push(
        { erp_key: 'INV-3', kind: 'invoice_create', chargeReferenceNumbers: ref('DI-3') } as (typeof later)[number],
        { erp_key: 'INV-4', kind: 'invoice_create', load_erp_key: 'DI-4', chargeIds: `${id('DI-4')}0` } as (typeof later)[number],
      );
    }
    source.add('later.json', later);
    const invoicesBefore = sim.stats().invoicesCreated;
    const summary = await push(config, dir, [{ name: 'mem', source }]);
    expect(summary).toMatchObject({ dead: 1, waiting: 0 });
    const results = source.results.get('later.json')!;
    expect(results[0]).toMatchObject({ status: 'done', referenceNumber: ref('DI-1'), loadId: id('DI-1') });
    expect(results[1]).toMatchObject({ status: 'done', referenceNumber: ref('DI-2'), loadId: id('DI-2') });
    expect(results[2]!.status).toBe('failed');
    expect(results[2]!.error).toBe('the API rejected it (HTTP 404): load M9999999 not found');

    const truth = new Map((await collectTruth(sim, 'loads')).map((l) => [String(l['reference_number']), l]));
    expect(truth.get(ref('DI-1'))!['isDeleted']).toBe(true);
    expect(truth.get(ref('DI-2'))!['isDeleted']).toBe(true);
    expect(truth.get(ref('DI-3'))!['isDeleted']).toBe(false);

    await withApp(config, dir, async (app) => {
      const rows = await new OutboxStore(app.db).list({ limit: 100 });
      const byKey = (key: string, kind: string) => rows.find((r) => r.erp_key === key && r.kind === kind)!;
      // Each delete's first answer was lost; the repeat's 410 proved the removal.
      for (const key of ['DI-1', 'DEL-2']) expect(byKey(key, 'load_delete').result_note).toBe('found removed after an earlier attempt (HTTP 410)');
      expect(byKey('CU-1', 'customer_create').result_note).toBe('found by companyID after an ambiguous create');
      if (variant === 'main') {
        for (const key of ['INV-3', 'INV-4']) expect(byKey(key, 'invoice_create').result_note).toMatch(/^found after an ambiguous create: invoice [0-9a-f]{24}$/);
      }
    });

    if (variant === 'main') {
      // One invoice per load, made by the first send; the look-up kept it from being sent twice.
      expect(sim.stats().invoicesCreated - invoicesBefore).toBe(2);
      expect(results[3]).toMatchObject({ status: 'done', referenceNumber: ref('DI-3'), loadId: id('DI-3') });
      expect(results[4]).toMatchObject({ status: 'done', referenceNumber: ref('DI-4'), loadId: id('DI-4') });
      const invoices = await collectTruth(sim, 'invoices');
      for (const key of ['DI-3', 'DI-4']) {
        expect(invoices.filter((i) => (i['loadDetails'] as { reference_number: string }).reference_number === ref(key))).toHaveLength(1);
      }
    }

    // A delete of a load already removed (another ERP key) is done at once: the ERP's wish holds.
    source.add('again.json', [{ erp_key: 'DEL-AGAIN', kind: 'load_delete', reference_number: ref('DI-2') }]);
    await push(config, dir, [{ name: 'mem', source }]);
    expect(source.results.get('again.json')![0]).toMatchObject({ status: 'done', referenceNumber: ref('DI-2') });
  });
});
