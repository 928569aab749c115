import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { listLoads } from '../../src/api/endpoints/loads.js';
import { openState } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { SqlTokenStore } from '../../src/state/stores/token-store.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { issuePair, startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * Found by the 10-account cluster chaos run (issue 11): a replica whose tenure had been cut
 * ("nothing more is sent to the API") still rotated a bare-pair brokerage account's refresh token
 * for a read in flight — reads pass the lease's send guard — and was SIGKILLed before it stored
 * the new pair; the next holder found only the rotated-away token and the account was lost. A
 * rotation changes the server's state, so it passes the guard like any write.
 */
class LeaseGone extends Error {}

let sim: SimulatorHandle | undefined;
const closing: Array<{ close(): void } | { destroy(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of closing.splice(0).reverse()) await ('destroy' in item ? item.destroy() : item.close());
  await sim?.close();
  sim = undefined;
});

describe('a brokerage token rotation under a lease', () => {
  it('is not sent by a view whose lease is gone; the pair stays alive for the next holder', async () => {
    const server = await startSim({ variant: 'brokerage', loads: 50, accessTokenTtlMs: 5_000 });
    sim = server;
    const credentials = await issuePair(server);
    const db = await openState({ kind: 'sqlite', path: path.join(tempDir('token-rotation-fenced'), 'state.sqlite') });
    await migrateToLatest(db);
    closing.push(db);
    const options = {
      baseUrl: server.baseUrl,
      variant: 'brokerage' as const,
      credentials,
      logger: silentLogger(),
      rateLimit: { requestsPerSecond: 500, maxInFlight: 2, adaptive: false },
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20, maxElapsedMs: 5_000 },
    };
    const replica = new ApiClient({ ...options, tokenStore: new SqlTokenStore(db) });
    closing.push(replica);
    let held = true;
    const tenure = replica.withSendGuard(() => {
      if (!held) throw new LeaseGone('the lease of this account passed');
    });
    expect((await listLoads(tenure, { skip: 0, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
    const rotations = () => server.stats().byRoute['GET /generate-new-token'] ?? {};
    // Its access token expires while it holds the lease: the read rotates.
    server.advance(6_000);
    expect((await listLoads(tenure, { skip: 5, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
    expect(rotations()['200']).toBe(1);
    const storedBefore = await new SqlTokenStore(db).load(replica.tokens.account);

    // The tenure is cut; a read of its still in flight finds the access token expired.
    held = false;
    server.advance(6_000);
    await expect(listLoads(tenure, { skip: 10, limit: 5, sortBy: 'asc' })).rejects.toBeInstanceOf(LeaseGone);
    expect(rotations()['200']).toBe(1);
    expect(await new SqlTokenStore(db).load(replica.tokens.account)).toEqual(storedBefore);

    // The next holder (another process on the same state) rotates the live refresh token.
    const next = new ApiClient({ ...options, tokenStore: new SqlTokenStore(db) });
    closing.push(next);
    expect((await listLoads(next, { skip: 10, limit: 5, sortBy: 'asc' })).items).toHaveLength(5);
    expect(rotations()['200']).toBe(2);
    expect(server.stats().retiredRefreshTokenUses).toBe(0);
    expect(await next.tokens.reauthRequired()).toBeUndefined();
  }, 60_000);
});
