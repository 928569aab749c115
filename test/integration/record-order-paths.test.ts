import crypto from 'node:crypto';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { getLoad, listLoads } from '../../src/api/endpoints/loads.js';
import { loadSchema } from '../../src/api/schemas/resources.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import { contentHash } from '../../src/sync/content-hash.js';
import { silentLogger } from '../../src/util/logger.js';
import { recordJson } from '../../src/util/record-json.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * A version of a load is the same record however it was read: an element of a large list page
 * (handed on as sent), of a small page (parsed whole), or read by reference (a webhook's refresh,
 * a replay after a failover). Its `_raw` (the record's JSON) and its content hash must not depend
 * on the path: a file drop that got the version twice, by two paths, held two different rows
 * (cluster chaos, seed 36017). The content hash stays the one earlier releases stored: over zod's
 * output order.
 */
let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const zodOrderHash = (json: string): string =>
  crypto.createHash('sha1').update(`upsert\u0000${JSON.stringify(loadSchema.parse(JSON.parse(json)))}`).digest('base64url');

describe.each(['main', 'brokerage'] as const)('a load read by every path (%s)', (variant) => {
  it('has the same _raw, in the API member order, and the same content hash, as earlier releases hashed', async () => {
    sim = await startSim({ variant, loads: 120, seed: 5 });
    const db = openStateDatabase(path.join(tempDir('record-order'), 'state.sqlite'));
    await migrateToLatest(db);
    const client = new ApiClient({
      baseUrl: sim.baseUrl,
      variant,
      credentials: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
      tokenStore: new SqlTokenStore(db),
      logger: silentLogger(),
      rateLimit: { requestsPerSecond: 1000, maxInFlight: 2, adaptive: false },
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxElapsedMs: 10_000 },
    });
    try {
      const query = variant === 'main' ? ({ sortBy: { createdAt: 1 } } as const) : {};
      // 50 loads: a body above the piecewise threshold, its elements kept as sent; 5: parsed whole.
      const large = await listLoads(client, { ...query, skip: 0, limit: 50 });
      const small = (await Promise.all([0, 5, 10, 15].map((skip) => listLoads(client, { ...query, skip, limit: 5 })))).flatMap((page) => page.items);
      expect(large.rejected).toEqual([]);
      expect(small).toHaveLength(20);
      const byReference = new Map(large.items.map((load) => [load.reference_number, load]));
      let reordered = 0;
      for (const viaSmallPage of small) {
        const viaLargePage = byReference.get(viaSmallPage.reference_number)!;
        expect(viaLargePage).toBeDefined();
        const viaReference = await getLoad(client, viaLargePage.reference_number);
        const raw = recordJson(viaLargePage);
        // The large page's element is its text as the API sent it.
        expect(Object.keys(JSON.parse(raw) as object)).toEqual(Object.keys(viaLargePage));
        expect(recordJson(viaSmallPage)).toBe(raw);
        expect(recordJson(viaReference)).toBe(raw);
        const hash = zodOrderHash(raw);
        for (const record of [viaLargePage, viaSmallPage, viaReference]) expect(contentHash('upsert', record)).toBe(hash);
        if (JSON.stringify(Object.keys(loadSchema.parse(JSON.parse(raw)))) !== JSON.stringify(Object.keys(viaLargePage))) reordered += 1;
      }
      // The simulator does not send the schema's declared fields first: the orders do differ.
      expect(reordered).toBeGreaterThan(10);
    } finally {
      client.close();
      await db.destroy();
    }
  });
});
