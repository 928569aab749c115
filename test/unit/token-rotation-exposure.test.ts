import { describe, expect, it } from 'vitest';
import { ServerClock } from '../../src/api/server-clock.js';
import { TokenManager, type TokenManagerOptions } from '../../src/api/token-manager.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { jwt } from '../helpers/test-jwt.js';

/**
 * On brokerage the refresh call rotates the only refresh token: until the new pair is stored, a
 * crash loses the account. How long storing took after the answer is reported when it is slow.
 */

function manager(slowRotationStoreMs: number) {
  const capture = capturingLogger();
  const store = new InMemoryTokenStore();
  let rotations = 0;
  const options: TokenManagerOptions = {
    variant: 'brokerage',
    credentials: { accessToken: jwt(-10), refreshToken: 'refresh-0' },
    store,
    account: 'brokerage|test',
    clock: new ServerClock(),
    refreshBeforeExpiryMs: 60_000,
    logger: capture.logger,
    slowRotationStoreMs,
    endpoints: {
      retrieveToken: () => Promise.reject(new Error('not configured')),
      refreshAccessToken: () => Promise.reject(new Error('main only')),
      rotateTokens: async () => ({ token: jwt(3600), refresh_token: `refresh-${++rotations}` }),
    },
  };
  return { tokens: new TokenManager(options), store, capture };
}

describe('rotation exposure', () => {
  it('a rotated pair stored later than the threshold is reported with the call and store times', async () => {
    const { tokens, store, capture } = manager(0);
    await tokens.accessToken();
    expect((await store.load('brokerage|test'))?.refreshToken).toBe('refresh-1');
    // Log lines pass a scrubbing stream on their way: let them arrive.
    await new Promise((resolve) => setImmediate(resolve));
    const warning = capture.lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => String(line['msg']).includes('rotated refresh token was stored'));
    expect(warning).toMatchObject({ level: 40, account: 'brokerage|test', storeMs: expect.any(Number), callMs: expect.any(Number) });
    expect(String(warning!['msg'])).toContain("a crash in that time loses this account's only token pair");
  });

  it('a prompt store says nothing', async () => {
    const { tokens, capture } = manager(60_000);
    await tokens.accessToken();
    await new Promise((resolve) => setImmediate(resolve));
    expect(capture.text()).toContain('access token refreshed');
    expect(capture.text()).not.toContain('rotated refresh token was stored');
  });
});
