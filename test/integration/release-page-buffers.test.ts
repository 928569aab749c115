import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { csvConnector, csvOptionsSchema } from '../../connectors/csv/index.js';
import { ApiClient } from '../../src/api/api-client.js';
import { listLoads } from '../../src/api/endpoints/loads.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { parseMapping } from '../../src/mapping/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { batchOf, record } from '../helpers/records.js';
import { mappersOf } from '../helpers/mappers.js';

/** Sizes of the ArrayBuffers handed to structuredClone for transfer (releaseBuffer's way of freeing memory). */
function spyOnTransfers(): number[] {
  const sizes: number[] = [];
  const original = globalThis.structuredClone;
  vi.spyOn(globalThis, 'structuredClone').mockImplementation(((value: unknown, options?: { transfer?: unknown[] }) => {
    for (const item of options?.transfer ?? []) if (item instanceof ArrayBuffer) sizes.push(item.byteLength);
    return original(value, options as Parameters<typeof structuredClone>[1]);
  }) as typeof structuredClone);
  return sizes;
}

afterEach(() => {
  vi.restoreAllMocks();
  nock.cleanAll();
});

describe('page buffers are freed once read (issue 14: they piled up outside the V8 heap)', () => {
  it('a large response body, once parsed', async () => {
    const base = 'http://release.test.local/v1';
    const envelope = (data: unknown) => ({ _object: '/api/response', self: '/x', version: '1.0.0', data, error: null });
    const loads = Array.from({ length: 50 }, (_, i) => ({ _id: `id-${i}`, reference_number: `M${i}`, notes: 'n'.repeat(3000) }));
    const body = JSON.stringify(envelope(loads));
    nock(base)
      .post('/retrieve-token')
      .reply(200, envelope({ access_token: 'a.b.c', refresh_token: 'refresh-aaaaaaaa', tokenType: 'public' }))
      .get('/loads')
      .query(true)
      .reply(200, body, { 'Content-Type': 'application/json' });
    const client = new ApiClient({
      baseUrl: base,
      variant: 'main',
      credentials: { clientId: 'c', clientSecret: 'secret-value-123' },
      tokenStore: new InMemoryTokenStore(),
      logger: silentLogger(),
      rateLimit: { requestsPerSecond: 1000, maxInFlight: 1, adaptive: false },
    });
    const sizes = spyOnTransfers();
    const page = await listLoads(client, { limit: 50 });
    expect(page.items.length + page.rejected.length).toBe(50);
    expect(sizes).toContain(Buffer.byteLength(body));
    client.close();
  });

  it("a page's CSV rows, once staged (and the staged page holds them)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'release-csv-'));
    const mapping = parseMapping('things', { table: 'things', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: 'text', path: 'text' }] });
    const instance = await csvConnector.create(csvOptionsSchema.parse({ directory: 'out' }), { instanceName: 'erp', logger: silentLogger(), baseDir: dir, mappings: mappersOf([['things', mapping]]) });
    await instance.init?.(new AbortController().signal);
    const things = Array.from({ length: 50 }, (_, i) => record('things', String(i), { id: String(i), text: 'x'.repeat(3000) }));
    const sizes = spyOnTransfers();
    await instance.sink!.write(batchOf('things', 'b-1', things), new AbortController().signal);
    expect(sizes.some((size) => size > 50 * 3000)).toBe(true);
    const staging = path.join(dir, 'out', '.staging');
    const [page] = (await readdir(staging)).filter((name) => name.endsWith('.pages'));
    expect((await readFile(path.join(staging, page!), 'utf8')).split('x'.repeat(3000)).length - 1).toBe(50);
    await instance.close?.();
  });
});
