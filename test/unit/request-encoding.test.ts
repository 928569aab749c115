import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { createLoad, uploadLoadDocument } from '../../src/api/endpoints/loads.js';
import { ApiEncodingError, ApiError } from '../../src/api/errors.js';
import { encodeRequestBody, type RequestEncoding } from '../../src/api/request-body.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { silentLogger } from '../../src/util/logger.js';

const BASE = 'http://encoding.test.local/v1';

/** The parts of a multipart body: name, the part's own headers, value. */
function parts(encoded: { data: unknown; contentType: string | undefined }): Array<{ name: string; headers: string; value: string }> {
  const boundary = /boundary=(.+)$/.exec(encoded.contentType ?? '')![1]!;
  const text = (encoded.data as Buffer).toString('utf8');
  expect(text.endsWith(`--${boundary}--\r\n`)).toBe(true);
  return text
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((chunk) => {
      const [head, ...rest] = chunk.replace(/^\r\n/, '').split('\r\n\r\n');
      return { name: /name="([^"]*)"/.exec(head!)![1]!, headers: head!, value: rest.join('\r\n\r\n').replace(/\r\n$/, '') };
    });
}

describe('encodeRequestBody', () => {
  it('multipart: strings as plain text parts, every other value as JSON in an application/json part, undefined left out', () => {
    const encoded = encodeRequestBody(
      { caller: 'abc', empty: '', looksJson: 'true', hazmat: false, count: 3, none: null, shipper: ['p1'], none2: undefined, address: { city: 'Köln' }, at: new Date('2024-06-01T00:00:00Z'), 'we"ird': 'x' },
      'multipart',
    );
    expect(encoded.contentType).toMatch(/^multipart\/form-data; boundary=/);
    const byName = new Map(parts(encoded).map((p) => [p.name, p]));
    expect([...byName.keys()]).toEqual(['caller', 'empty', 'looksJson', 'hazmat', 'count', 'none', 'shipper', 'address', 'at', 'we%22ird']);
    for (const name of ['caller', 'empty', 'looksJson', 'at', 'we%22ird']) expect(byName.get(name)!.headers, name).not.toContain('Content-Type');
    for (const name of ['hazmat', 'count', 'none', 'shipper', 'address']) expect(byName.get(name)!.headers, name).toContain('Content-Type: application/json');
    expect(Object.fromEntries([...byName].map(([name, p]) => [name, p.value]))).toEqual({
      caller: 'abc',
      empty: '',
      looksJson: 'true',
      hazmat: 'false',
      count: '3',
      none: 'null',
      shipper: '["p1"]',
      address: '{"city":"Köln"}',
      at: '2024-06-01T00:00:00.000Z',
      'we%22ird': 'x',
    });
  });

  it('json: the body as JSON; a FormData upload goes as it is in either encoding', () => {
    expect(encodeRequestBody({ a: [1] }, 'json')).toEqual({ data: '{"a":[1]}', contentType: 'application/json' });
    const form = new FormData();
    for (const encoding of ['json', 'multipart'] as const) expect(encodeRequestBody(form, encoding)).toEqual({ data: form, contentType: undefined });
  });
});

describe('a server refusing the encoding', () => {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => nock.cleanAll());

  function client(requestEncoding: RequestEncoding): ApiClient {
    return new ApiClient({
      baseUrl: BASE,
      variant: 'brokerage',
      credentials: { accessToken: 'access-token-1', refreshToken: 'refresh-token-1' },
      tokenStore: new InMemoryTokenStore(),
      logger: silentLogger(),
      requestEncoding,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxElapsedMs: 5_000 },
    });
  }
  const refusal = (message: string) => ({ _object: '/api/response', self: '/loads', version: '1.0.0', data: null, error: { message }, message });

  it('a 400 asking for multipart after a JSON body names api.requestEncoding; other 400s stay plain', async () => {
    nock(BASE).post('/loads').reply(400, refusal('Content-Type must be multipart/form-data'));
    const c = client('json');
    const error = await createLoad(c, { caller: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiEncodingError);
    expect((error as Error).message).toBe(
      'POST /loads: the server expects multipart/form-data request bodies, not JSON (it answered HTTP 400: Content-Type must be multipart/form-data); set api.requestEncoding: multipart',
    );
    nock(BASE).post('/loads').reply(400, refusal('caller is required'));
    const plain = await createLoad(c, {}).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(ApiError);
    expect(plain).not.toBeInstanceOf(ApiEncodingError);
    c.close();
  });

  it('a 415 after a multipart body says to switch to json; an upload is never blamed on the setting', async () => {
    nock(BASE).post('/loads').reply(415, refusal('unsupported media type'));
    const c = client('multipart');
    await expect(createLoad(c, { caller: 'x' })).rejects.toThrow(
      'POST /loads: the server refused the multipart/form-data body (it answered HTTP 415: unsupported media type); set api.requestEncoding: json',
    );
    nock(BASE).post('/loads/document').reply(400, refusal('file must be sent as multipart'));
    const upload = await uploadLoadDocument(c, { referenceNumber: 'R1', documentType: 'Other', fileName: 'a.txt', content: Buffer.from('a') }).catch((e: unknown) => e);
    expect(upload).toBeInstanceOf(ApiError);
    expect(upload).not.toBeInstanceOf(ApiEncodingError);
    c.close();
  });
});
