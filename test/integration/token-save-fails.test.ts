import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { listLoads } from '../../src/api/endpoints/loads.js';
import { openState } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import type { StoredTokens } from '../../src/api/token-store.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { issuePair, startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * Found by the cluster chaos run with ten accounts (issue 11, item 7): on brokerage a refresh
 * rotates the refresh token on the server at once; when storing the new pair then fails (the
 * state pool timed out acquiring a connection), the process must still hold the new pair — else
 * its next refresh presents the rotated-away token and an account with only a token pair is
 * locked out for good (reauth_required).
 */
class FlakyTokenStore extends SqlTokenStore {
  failNextSave = false;
  override async save(account: string, tokens: StoredTokens): Promise<void> {
    if (this.failNextSave) {
      this.failNextSave = false;
      throw new Error('timeout exceeded when trying to connect');
    }
    return super.save(account, tokens);
  }
}

let sim: SimulatorHandle | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('a refresh whose pair cannot be stored', () => {
  it('brokerage with a token pair: keeps the rotated pair in memory and never uses the rotated-away refresh token', async () => {
    sim = await startSim({ variant: 'brokerage', loads: 100, accessTokenTtlMs: 5_000 });
    const credentials = await issuePair(sim);
    const db = await openState({ kind: 'sqlite', path: path.join(tempDir('token-save-fails'), 'state.sqlite') });
    await migrateToLatest(db);
    const store = new FlakyTokenStore(db);
    const client = new ApiClient({
      baseUrl: sim.baseUrl,
      variant: 'brokerage',
      credentials,
      tokenStore: store,
      logger: silentLogger(),
      rateLimit: { requestsPerSecond: 500, maxInFlight: 2, adaptive: false },
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxElapsedMs: 10_000 },
    });
    try {
      expect((await listLoads(client, { skip: 0, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
      // The access token expires; the refresh rotates the pair on the server, its save fails.
      sim.advance(6_000);
      store.failNextSave = true;
      await listLoads(client, { skip: 5, limit: 5, sortBy: 'asc' }).catch(() => undefined);
      expect(store.failNextSave).toBe(false);
      // The next expiry: refreshed with the live refresh token, stored this time.
      sim.advance(6_000);
      expect((await listLoads(client, { skip: 10, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
      expect(sim.stats().retiredRefreshTokenUses).toBe(0);
      expect(await client.tokens.reauthRequired()).toBeUndefined();
    } finally {
      client.close();
      await db.destroy();
    }
  }, 60_000);
});
