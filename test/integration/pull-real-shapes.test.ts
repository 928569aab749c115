import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const cents = (value: unknown): number => Math.round(Number(value) * 100);

/**
 * With `realShapes` on, the simulator sends invoices whose status, amounts, billingDate and caller
 * live only in the entries, money as strings on loads, and embedded shipper/consignee objects. The
 * default mappings must still fill the header columns with the store's truth.
 */
describe('pull: real payload shapes', () => {
  for (const variant of ['main', 'brokerage'] as const) {
    it(`${variant}: invoice header columns and load references are filled from the real shapes`, async () => {
      sim = await startSim({ variant, loads: 400, seed: 12, realShapes: true, invoiceListOmitsMultiChargeSet: false });
      const dir = tempDir(`real-shapes-${variant}`);
      const config = pullConfig({ sim, dir, streams: ['loads', 'invoices'] });
      for (const s of await syncOnce(config, dir)) expect(s.status, `${s.stream}: ${s.error}`).toBe('ok');
      for (let i = 0; i < 5; i += 1) await sim.mutate(100);
      ageChangesPastSafetyLag(sim);
      for (const s of await syncOnce(config, dir)) expect(s.status, `${s.stream}: ${s.error}`).toBe('ok');

      // The API really sent the header fields only inside the entries.
      const sample = (JSON.parse(latestByKey(readCsvRows(path.join(dir, 'out'), 'invoices')).values().next().value!._raw!) as Record<string, unknown>);
      expect(sample).not.toHaveProperty('status');
      expect(sample).not.toHaveProperty('totalAmount');

      const truth = await collectTruth(sim, 'invoices');
      const latest = latestByKey(readCsvRows(path.join(dir, 'out'), 'invoices'));
      expect(latest.size).toBe(truth.length);
      let multiEntry = 0;
      let negativeEntryRemain = false;
      for (const invoice of truth) {
        const row = latest.get(String(invoice._id));
        expect(row, String(invoice._id)).toBeDefined();
        const caller = (invoice.caller ?? invoice.customerDetails) as { _id: string; company_name: string };
        expect([row!.status, cents(row!.total_amount), cents(row!.paid_amount), cents(row!.remain_amount), Date.parse(row!.billing_date!), row!.caller_id, row!.caller_name], String(invoice._id)).toEqual([
          invoice.status,
          cents(invoice.totalAmount),
          cents(invoice.paidAmount),
          cents(invoice.remainAmount),
          Date.parse(String(invoice.billingDate)),
          caller._id,
          caller.company_name,
        ]);
        const entries = invoice.invoice as Array<{ totalAmount: number }>;
        if (entries.length > 1) multiEntry += 1;
        if (entries.length > 1 && Number(invoice.paidAmount) > entries[0]!.totalAmount) negativeEntryRemain = true;
      }
      expect(multiEntry).toBeGreaterThan(0);
      if (negativeEntryRemain) {
        const entryRows = readCsvRows(path.join(dir, 'out'), 'invoice_entries');
        expect(entryRows.some((row) => Number(row.remain_amount) < 0)).toBe(true);
      }

      const loads = await collectTruth(sim, 'loads');
      const loadRows = latestByKey(readCsvRows(path.join(dir, 'out'), 'loads'));
      for (const load of loads.slice(0, 50)) {
        const row = loadRows.get(String(load.reference_number));
        if (!row) continue;
        expect([row.shipper_id, row.consignee_id, cents(row.total_amount)]).toEqual([(load.shipper as string[])[0], (load.consignee as string[]).join(';'), cents(load.totalAmount)]);
      }
    }, 180_000);
  }
});
