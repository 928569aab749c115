import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

let sim: SimulatorHandle | undefined;

async function deleteLoadThroughApi(handle: SimulatorHandle, loadId: string): Promise<void> {
  const token = (await (
    await fetch(`${handle.baseUrl}/retrieve-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: handle.options.clientId, clientSecret: handle.options.clientSecret }),
    })
  ).json()) as { data: { access_token: string } };
  const response = await fetch(`${handle.baseUrl}/loads/${encodeURIComponent(loadId)}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token.data.access_token}` },
  });
  if (!response.ok) throw new Error(`DELETE /loads/${loadId}: HTTP ${response.status}`);
}
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/**
 * Invoices have no updatedAt filter and the list endpoint omits invoices spanning several charge
 * sets (the simulator does both). Paid-later invoices must end up FULL_PAID with their payment
 * history; omitted invoices must still arrive (gap-fill through GET /invoices/<reference_number>).
 */
describe('pull: invoices', () => {
  for (const variant of ['main', 'brokerage'] as const) {
    it(`${variant}: payments after the billing date and invoices the list omits all reach the sink`, async () => {
      sim = await startSim({ variant, loads: 3000, seed: 5, invoiceListOmitsMultiChargeSet: true });
      const dir = tempDir(`invoices-${variant}`);
      const config = pullConfig({ sim, dir, streams: ['loads', 'invoices'] });
      // A load deleted after billing, whose invoice the list omits: the tombstone is the only
      // version of the load the daemon ever sees, and its invoice must still arrive.
      const omitted = (await collectTruth(sim, 'invoices')).find((inv) => Array.isArray(inv.invoice) && inv.invoice.length > 1)!;
      const omittedRef = String((omitted.invoice as Array<{ load_reference_number: string }>)[0]!.load_reference_number);
      const load = (await collectTruth(sim, 'loads')).find((l) => l.reference_number === omittedRef)!;
      await deleteLoadThroughApi(sim, String(load._id));
      const first = await syncOnce(config, dir);
      for (const s of first) expect(s.status, `${s.stream}: ${s.error}`).toBe('ok');

      // Payments, new invoices (loads reaching BILLING), and everything else the mutator does.
      for (let i = 0; i < 10; i += 1) await sim.mutate(100);
      ageChangesPastSafetyLag(sim);
      const second = await syncOnce(config, dir);
      for (const s of second) expect(s.status, `${s.stream}: ${s.error}`).toBe('ok');

      const truth = await collectTruth(sim, 'invoices');
      const rows = readCsvRows(path.join(dir, 'out'), 'invoices');
      const latest = latestByKey(rows);
      const cmp = compareWithTruth(truth, latest, (r) => String(r._id), () => false);
      expect({ missing: cmp.missing.length, stale: cmp.stale.length }).toEqual({ missing: 0, stale: 0 });

      const multiChargeSet = truth.filter((inv) => Array.isArray(inv.invoice) && inv.invoice.length > 1);
      expect(multiChargeSet.length).toBeGreaterThan(0);
      for (const inv of multiChargeSet) expect(latest.has(String(inv._id))).toBe(true);
      expect(latest.has(String(omitted._id))).toBe(true);

      const paid = truth.filter((inv) => Array.isArray(inv.paymentHistory) && inv.paymentHistory.length > 0);
      expect(paid.length).toBeGreaterThan(0);
      for (const inv of paid) {
        const row = latest.get(String(inv._id))!;
        const raw = JSON.parse(row._raw!) as { status?: string; paymentHistory?: unknown[] };
        expect(raw.status).toBe(inv.status);
        if (variant === 'main') expect(raw.paymentHistory?.length).toBe((inv.paymentHistory as unknown[]).length);
      }
    }, 180_000);
  }
});
