import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { createCustomer, updateCustomer } from '../../src/api/endpoints/customers.js';
import { changeLoadStatusBrokerage, createLoad, updateLoad, uploadLoadDocument } from '../../src/api/endpoints/loads.js';
import { ApiEncodingError } from '../../src/api/errors.js';
import type { RequestEncoding } from '../../src/api/request-body.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { collectTruth, startSim } from '../helpers/pull-harness.js';

/**
 * Issue 15 acceptance: with `requestEncoding: multipart` against the strict brokerage simulator
 * every write succeeds; with `json` every write fails with an error that says the server expects
 * multipart (and names `api.requestEncoding`). The multipart body is lossless: the simulator stores
 * the typed values the client meant (booleans, arrays, objects, empty strings, non-ASCII text).
 */
let strict: SimulatorHandle;
let lenient: SimulatorHandle;
let callers: string[];
let consignee: string;

beforeAll(async () => {
  [strict, lenient] = await Promise.all([
    startSim({ variant: 'brokerage', loads: 50, customers: 10, consignees: 5, strictEncoding: true }),
    startSim({ variant: 'brokerage', loads: 50, customers: 10, consignees: 5 }),
  ]);
  callers = (await collectTruth(strict, 'customers')).map((c) => String(c['_id']));
  consignee = String((await collectTruth(strict, 'consignees'))[0]!['_id']);
});
afterAll(async () => {
  await Promise.all([strict?.close(), lenient?.close()]);
});

function clientFor(sim: SimulatorHandle, requestEncoding: RequestEncoding, auth?: { accessToken: string; refreshToken: string }): ApiClient {
  return new ApiClient({
    baseUrl: sim.baseUrl,
    variant: 'brokerage',
    credentials: auth ?? { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
    tokenStore: new InMemoryTokenStore(),
    logger: silentLogger(),
    requestEncoding,
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 50, maxElapsedMs: 5_000 },
  });
}

function loadBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type_of_load: 'IMPORT',
    preSetOrderStatus: '',
    caller: callers[0],
    shipper: [callers[1]],
    consignee: [consignee],
    hazmat: true,
    hot: false,
    containerNo: 'MSCU1234567',
    shipperDetails: [{ company_name: 'Port Ölhafen "Nord"', address: 'Kai 1', address1: 'Kai 1', city: 'Hamburg', country: 'DE', zip_code: '20457', lat: 53.5, isValidAddress: true }],
    ...extra,
  };
}

function customerBody(code: string): Record<string, unknown> {
  return {
    companyID: code,
    company_name: `Encoding Test ${code}`,
    main_contact_name: 'Ana Nguyen',
    address: { address: '1 Main St, Newark, NJ', lat: 40.7, lng: -74.1 },
    address1: '1 Main St',
    isAddressVerified: true,
    city: 'Newark',
    state: 'NJ',
    country: 'US',
    zip_code: '07114',
    geofence: 'none',
  };
}

/** Every kind of write the brokerage client makes, in order; each resolves with what it wrote. */
function writes(client: ApiClient): Array<[string, () => Promise<unknown>]> {
  let ref = '';
  let customerId = '';
  return [
    ['POST /loads', async () => (ref = (await createLoad(client, loadBody())).reference_number)],
    ['PUT /loads', () => updateLoad(client, ref || 'M000001', { freight: 'HOLD', custom: 'RELEASED', sealNo: 'SEAL-1' })],
    ['PUT /load-status/', () => changeLoadStatusBrokerage(client, { reference_number: ref || 'M000001', status: 'AVAILABLE', strictChange: false })],
    ['POST /customer', async () => (customerId = String((await createCustomer(client, customerBody(`ENC-${client.requestEncoding}`)))['_id']))],
    ['PUT /customer/:id', () => updateCustomer(client, customerId || callers[2]!, { mobile: '+15550001111', account_hold: false })],
  ];
}

describe('api.requestEncoding against the strict brokerage simulator', () => {
  it('multipart: every write succeeds, the token request included', async () => {
    const client = clientFor(strict, 'multipart');
    try {
      for (const [name, write] of writes(client)) await expect(write(), name).resolves.toBeTruthy();
      const loads = await collectTruth(strict, 'loads');
      const created = loads.find((l) => l['containerNo'] === 'MSCU1234567')!;
      expect(created).toMatchObject({ status: 'AVAILABLE', freight: 'HOLD', custom: 'RELEASED', sealNo: 'SEAL-1' });
      const doc = await uploadLoadDocument(client, { referenceNumber: String(created['reference_number']), documentType: 'Proof of Delivery', fileName: 'pod.pdf', content: Buffer.from('%PDF-1.4') });
      expect(doc.documentType).toBe('Proof of Delivery');
    } finally {
      client.close();
    }
  });

  it('json: every write fails with an error that says the server expects multipart and names api.requestEncoding', async () => {
    // A token pair obtained over multipart, so each write meets the refusal itself.
    const form = new FormData();
    form.append('clientId', strict.options.clientId);
    form.append('clientSecret', strict.options.clientSecret);
    const issued = (await (await fetch(`${strict.baseUrl}/retrieve-token`, { method: 'POST', body: form })).json()) as { data: { access_token: string; refresh_token: string } };
    const [access, refresh] = [issued.data.access_token, issued.data.refresh_token];
    const client = clientFor(strict, 'json', { accessToken: access, refreshToken: refresh });
    const before = strict.stats().requests;
    try {
      for (const [name, write] of writes(client)) {
        const error = await write().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, name).toBeInstanceOf(ApiEncodingError);
        expect((error as Error).message).toContain(`${name}: the server expects multipart/form-data request bodies, not JSON`);
        expect((error as Error).message).toContain('set api.requestEncoding: multipart');
        expect((error as ApiEncodingError).status).toBe(415);
      }
    } finally {
      client.close();
    }
    // Refused, not retried: one request per write.
    expect(strict.stats().requests - before).toBe(5);
  });

  it('json with client credentials: the token request is refused the same way', async () => {
    const client = clientFor(strict, 'json');
    try {
      await expect(createLoad(client, loadBody())).rejects.toThrow(/POST \/retrieve-token: the server expects multipart\/form-data.*set api\.requestEncoding: multipart/);
    } finally {
      client.close();
    }
  });
});

describe('multipart bodies are lossless', () => {
  it('the simulator stores the typed values the client sent (booleans, arrays, objects, empty and non-ASCII strings)', async () => {
    for (const encoding of ['multipart', 'json'] as const) {
      const client = clientFor(lenient, encoding);
      try {
        const containerNo = encoding === 'multipart' ? 'MAEU7654321' : 'MAEU7654322';
        const load = await createLoad(client, loadBody({ containerNo, purchaseOrderNo: 'true', secondaryReferenceNo: '[1]' }));
        const stored = (await collectTruth(lenient, 'loads')).find((l) => l['reference_number'] === load.reference_number)!;
        expect(stored, encoding).toMatchObject({
          preSetOrderStatus: '',
          hazmat: true,
          hot: false,
          shipper: [callers[1]],
          consignee: [consignee],
          // Text that looks like JSON stays text: only parts marked application/json are parsed.
          purchaseOrderNo: 'true',
          secondaryReferenceNo: '[1]',
          shipperDetails: [{ company_name: 'Port Ölhafen "Nord"', lat: 53.5, isValidAddress: true }],
        });
      } finally {
        client.close();
      }
    }
  });

  it('main with strictEncoding still takes JSON (§5.2 only recommends it there)', async () => {
    const main = await startSim({ variant: 'main', loads: 10, customers: 5, consignees: 5, strictEncoding: true });
    const client = new ApiClient({
      baseUrl: main.baseUrl,
      variant: 'main',
      credentials: { clientId: main.options.clientId, clientSecret: main.options.clientSecret },
      tokenStore: new InMemoryTokenStore(),
      logger: silentLogger(),
    });
    try {
      const id = String((await collectTruth(main, 'customers'))[0]!['_id']);
      await expect(createLoad(client, { type_of_load: 'EXPORT', preSetOrderStatus: '', caller: id, shipper: [id] })).resolves.toMatchObject({ status: 'PENDING' });
    } finally {
      client.close();
      await main.close();
    }
  });
});
