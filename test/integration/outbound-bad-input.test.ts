import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { copyBadInputCorpus, resultsOf } from '../helpers/outbound-corpus.js';
import { loadsByErpKey, outboundConfig, push, syncDirectory } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * The bad-input corpus through a real inbox: every broken row gets an error naming the field and
 * the value, and every valid row beside it is still pushed.
 */
describe('outbound bad input', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ loads: 100, customers: 10, consignees: 5 });
  });
  afterAll(async () => sim.close());

  it('writes a precise error per bad row and pushes every valid row', async () => {
    const dir = tempDir('outbound-bad');
    const inbox = path.join(dir, 'inbox');
    const config = outboundConfig({
      sim,
      dir,
      connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox', pattern: ['*.csv', '*.json'] } } },
      outbound: { sources: ['erp_inbox'] },
    });
    await syncDirectory(config, dir);
    copyBadInputCorpus(inbox);

    const summary = await push(config, dir);
    expect(summary.units).toBe(8);
    expect(summary.dead).toBe(0);

    const missing = resultsOf(inbox, 'missing-required.csv');
    expect(missing.map((r) => r['error'])).toEqual([
      'type_of_load: is required (one of IMPORT, EXPORT, ROAD, BILL_ONLY)',
      'caller: is required',
      'shipper: is required',
      'erp_key: is required',
      'kind: is required (one of create, update, status, document, customer_create, customer_update, load_delete, invoice_create (or create_load, update_load, change_status, upload_document, create_customer, update_customer, delete_load, create_invoice))',
      '',
    ]);
    expect(missing[5]).toMatchObject({ status: 'done' });
    expect(resultsOf(inbox, 'no-preset-column.csv')[0]!['error']).toContain('preSetOrderStatus: is required (one of');

    const enums = resultsOf(inbox, 'bad-enums.csv');
    expect(enums[0]!['error']).toBe('type_of_load: "IMPRT" is not one of IMPORT, EXPORT, ROAD, BILL_ONLY (did you mean IMPORT?)');
    expect(enums[1]!['error']).toMatch(/^preSetOrderStatus: "PULL_DELIVER" is not one of PULL_DELIVER_RETURN, .*"" \(empty\)/);
    expect(enums[2]!['error']).toBe('status: "AVAILABLE" is not one of PENDING');
    expect(enums[3]!['error']).toBe('freight: "MAYBE" is not one of HOLD, RELEASED');
    expect(enums[4]).toMatchObject({ status: 'done', error: '' });
    expect(enums[5]!['error']).toBe('status: "DISPATCHED" is not one of PENDING, AVAILABLE');
    expect(enums[6]!['error']).toMatch(/^documentType: "POD" is not one of Bill of Lading, /);
    expect(enums[7]!['error']).toMatch(/^kind: "frobnicate" is not one of create, update, status, document/);

    const types = resultsOf(inbox, 'wrong-types.json');
    expect(types.map((r) => r['error'])).toEqual([
      'hazmat: expected true or false, got "maybe"',
      'shipper: expected a list of ids (a;b or a JSON array), got number 42',
      'lastFreeDay: expected an ISO 8601 date-time such as 2024-05-01T08:00:00Z, got "yesterday"',
      'shipperDetails[0].city: is required',
      'caller: expected text, got an object',
      'contianerNo: unknown field for kind create (did you mean containerNo?)',
      'element 7: expected an object, got string',
      '',
    ]);

    const codes = resultsOf(inbox, 'unknown-caller.csv');
    expect(codes[0]!['error']).toBe('caller: unknown customer code "ACME-9" (not among 15 synced customers; is the customers stream enabled?)');
    expect(codes[1]!['error']).toBe('shipper[1]: unknown customer code "NOPE-1" (not among 15 synced customers; is the customers stream enabled?)');
    expect(codes[2]!['error']).toBe('load_erp_key: no create with erp_key "BAD-C-3" has been received (send the create first, in an earlier row or file, or give reference_number)');
    expect(codes[3]!['error']).toBe('status: is required (one of PENDING, AVAILABLE)');
    expect(codes[4]).toMatchObject({ status: 'done' });

    const malformed = resultsOf(inbox, 'malformed.csv');
    expect(malformed[0]!['error']).toMatch(/^line 2: /);
    expect(malformed[1]!['error']).toBe('line 3: 5 fields, but the header has 6');
    expect(malformed[2]).toMatchObject({ status: 'done' });

    const dupes = resultsOf(inbox, 'duplicate-keys.csv');
    expect(dupes[0]).toMatchObject({ status: 'done' });
    expect(dupes[1]).toMatchObject({ status: 'done', reference_number: dupes[0]!['reference_number'], outbox_id: dupes[0]!['outbox_id'] });
    expect(dupes[2]!['error']).toMatch(/^erp_key: "OK-D-1" was already received as a create with different content \(outbox #\d+, (done|pending|sending)/);

    const hugeResults = resultsOf(inbox, 'huge-line.csv');
    expect(hugeResults.map((r) => r['status'])).toEqual(['done', 'failed', 'done']);
    expect(hugeResults[1]!['error']).toMatch(/line 3|officeNote/);

    // Every valid row is in the API, exactly once.
    const valid = ['OK-M-1', 'OK-E-1', 'OK-T-1', 'OK-C-1', 'OK-X-1', 'OK-D-1', 'OK-H-1', 'OK-H-3'];
    const truth = await loadsByErpKey(sim, valid);
    for (const key of valid) expect(truth.get(key)?.length, key).toBe(1);
  });
});
