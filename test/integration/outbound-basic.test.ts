import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { MemorySource } from '../helpers/memory-source.js';
import { loadsByErpKey, outboundConfig, push, syncDirectory, withApp } from '../helpers/outbound-harness.js';
import { collectTruth, startSim, tempDir } from '../helpers/pull-harness.js';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';

/**
 * Both variants; brokerage against the strict simulator (bodies must be multipart/form-data, spec
 * §5.2), so every write below also proves the default `api.requestEncoding: multipart` there.
 */
describe.each(['main', 'brokerage'] as const)('outbound push against the simulator (in-memory source), %s', (variant) => {
  const brokerage = variant === 'brokerage';
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ variant, loads: 200, customers: 30, consignees: 20, strictEncoding: brokerage });
  });
  afterAll(async () => sim.close());

  it('creates loads from ERP codes, applies updates, status changes and documents in order, writes results back', async () => {
    const dir = tempDir(`outbound-basic-${variant}`);
    const config = outboundConfig({ sim, dir });
    await syncDirectory(config, dir);
    const source = new MemorySource();
    const create = (key: string, extra: Record<string, unknown> = {}) => ({
      erp_key: key,
      kind: 'create',
      type_of_load: 'IMPORT',
      preSetOrderStatus: '',
      caller: 'CUS000001',
      shipper: 'CUS000002;CUS000003',
      consignee: 'CON000001',
      containerNo: `TEST${key.slice(-7).padStart(7, '0')}`,
      hazmat: 'false',
      lastFreeDay: '2024-06-01',
      ...extra,
    });
    source.add('orders-1.csv', [
      create('SO-1'),
      create('SO-2'),
      // Brokerage: the §4.4.4 parameters beside the status, and holds as HOLD/RELEASED (§4.4.2).
      brokerage
        ? { erp_key: 'SO-1', kind: 'status', status: 'AVAILABLE', containerNo: 'MSCU7777777', notes: 'ready at the pier', strictChange: 'false', timeOfStatus: '2024-06-02T08:00:00Z' }
        : { erp_key: 'SO-1', kind: 'status', status: 'AVAILABLE' },
      { erp_key: 'SO-1-upd', kind: 'update', load_erp_key: 'SO-1', sealNo: 'SEAL-9', hot: 'yes', ...(brokerage ? { freight: 'hold', custom: 'RELEASED' } : {}) },
      { erp_key: 'SO-1-pod', kind: 'document', load_erp_key: 'SO-1', documentType: 'Proof of Delivery', file_base64: Buffer.from('%PDF-1.4 pod').toString('base64'), file_name: 'pod-SO-1.pdf' },
      create('SO-1'),
      { erp_key: 'SO-9', kind: 'create', type_of_load: 'IMPRT', preSetOrderStatus: '', caller: 'ACME-9', shipper: 'CUS000002' },
    ]);
    const summary = await push(config, dir, [{ name: 'mem', source }]);
    expect(summary).toMatchObject({ units: 1, commands: 5, duplicates: 1, invalid: 1, dead: 0 });
    const results = source.results.get('orders-1.csv')!;
    expect(results).toHaveLength(7);
    const [r1, r2, r3, r4, r5, r6, r7] = results;
    expect(r1).toMatchObject({ status: 'done' });
    expect(r1!.referenceNumber).toMatch(brokerage ? /^BRK/ : /^M/);
    expect(r2!.referenceNumber).not.toBe(r1!.referenceNumber);
    expect(r3).toMatchObject({ status: 'done', referenceNumber: r1!.referenceNumber });
    expect(r4).toMatchObject({ status: 'done', referenceNumber: r1!.referenceNumber });
    expect(r5).toMatchObject({ status: 'done', referenceNumber: r1!.referenceNumber });
    expect(r6).toMatchObject({ status: 'done', referenceNumber: r1!.referenceNumber, outboxId: r1!.outboxId });
    expect(r7!.status).toBe('failed');
    expect(r7!.error).toContain('type_of_load: "IMPRT" is not one of IMPORT, EXPORT, ROAD, BILL_ONLY (did you mean IMPORT?)');

    const truth = await loadsByErpKey(sim, ['SO-1', 'SO-2']);
    expect(truth.get('SO-1')).toHaveLength(1);
    expect(truth.get('SO-2')).toHaveLength(1);
    const load = truth.get('SO-1')![0]!;
    expect(load).toMatchObject({ status: 'AVAILABLE', sealNo: 'SEAL-9', reference_number: r1!.referenceNumber });
    if (brokerage) expect(load).toMatchObject({ containerNo: 'MSCU7777777', freight: 'HOLD', custom: 'RELEASED', isHot: true });
    expect((load['documents'] as Array<{ type: string }>).some((d) => d.type === 'Proof of Delivery')).toBe(true);

    // A second push: the source hands nothing new; nothing is sent again.
    const again = await push(config, dir, [{ name: 'mem', source }]);
    expect(again).toMatchObject({ units: 0, steps: 0 });
    await withApp(config, dir, async (app) => {
      expect(await new OutboxStore(app.db).countsByState()).toEqual({ done: 5 });
    });
  });

  // Brokerage only (main accepts JSON): defined only there, so the main run reports no skipped test.
  if (brokerage) it('requestEncoding json against the strict server: every write fails saying the server expects multipart', async () => {
    const dir = tempDir('outbound-json-strict');
    // The directory (and the token pair, kept in the state DB) comes in over multipart first.
    await syncDirectory(outboundConfig({ sim, dir }), dir);
    const config = outboundConfig({ sim, dir, api: { requestEncoding: 'json' } });
    const existing = String((await collectTruth(sim, 'loads')).find((l) => l['isDeleted'] !== true)!['reference_number']);
    const source = new MemorySource();
    source.add('json.csv', [
      { erp_key: 'J-1', kind: 'create', type_of_load: 'IMPORT', preSetOrderStatus: '', caller: 'CUS000001', shipper: 'CUS000002', consignee: 'CON000001' },
      { erp_key: 'J-2', kind: 'update', reference_number: existing, freight: 'HOLD' },
      { erp_key: 'J-3', kind: 'status', reference_number: existing, status: 'AVAILABLE', notes: 'x' },
    ]);
    const before = sim.stats().requests;
    await push(config, dir, [{ name: 'mem', source }]);
    const results = source.results.get('json.csv')!;
    expect(results).toHaveLength(3);
    for (const [i, route] of ['POST /loads', 'PUT /loads', 'PUT /load-status/'].entries()) {
      expect(results[i]!.status).toBe('failed');
      expect(results[i]!.error).toContain(`${route}: the server expects multipart/form-data request bodies, not JSON`);
      expect(results[i]!.error).toContain('set api.requestEncoding: multipart');
    }
    // Refused, so never retried: the create is not sent twice nor looked up as ambiguous.
    expect(sim.stats().requests - before).toBeLessThan(10);
    expect((await loadsByErpKey(sim, ['J-1'])).size).toBe(0);
  });

  it('names an unknown customer code precisely', async () => {
    const dir = tempDir(`outbound-codes-${variant}`);
    const config = outboundConfig({ sim, dir });
    await syncDirectory(config, dir);
    const source = new MemorySource();
    source.add('u', [{ erp_key: 'X-1', kind: 'create', type_of_load: 'EXPORT', preSetOrderStatus: 'PULL_RETURN', caller: 'ACME-9', shipper: 'CUS000002', consignee: 'CON000001' }]);
    await push(config, dir, [{ name: 'mem', source }]);
    expect(source.resultOf('u', '1')?.error).toBe('caller: unknown customer code "ACME-9" (not among 50 synced customers; is the customers stream enabled?)');
  });
});
