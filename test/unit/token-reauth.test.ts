import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { ReauthRequiredError } from '../../src/api/errors.js';
import { getLoad } from '../../src/api/endpoints/loads.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { evaluateConditions, type ConditionSources } from '../../src/notify/evaluate-conditions.js';
import { diffConditions } from '../../src/notify/transitions.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { jwt } from '../helpers/test-jwt.js';

/**
 * Issue 11, item 4: client credentials rejected (401) mark the account reauth_required; further
 * calls fail at once without a request; other credentials or a successful `check`
 * (reauthenticate) clear it; the notifier's auth-lost condition opens once.
 */
const BASE = 'http://reauth.test.local/v1';
const envelope = (data: unknown) => ({ _object: '/api/response', self: '/x', version: '1.0.0', data, error: null });
function client(store: InMemoryTokenStore, clientSecret: string): ApiClient {
  return new ApiClient({
    baseUrl: BASE,
    variant: 'main',
    credentials: { clientId: 'client-1', clientSecret },
    tokenStore: store,
    logger: capturingLogger().logger,
    rateLimit: { requestsPerSecond: 1000, maxInFlight: 4, adaptive: false },
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5, maxElapsedMs: 5_000 },
  });
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

describe('reauth_required', () => {
  it('rejected client credentials: marked once, then no request until other credentials or a successful check', async () => {
    const store = new InMemoryTokenStore();
    const first = client(store, 'wrong-secret-1');
    const refused = nock(BASE).post('/retrieve-token').once().reply(401, { status: 401, message: 'clientId or clientSecret is wrong' });
    await expect(getLoad(first, 'A')).rejects.toBeInstanceOf(ReauthRequiredError);
    expect(refused.isDone()).toBe(true);
    const mark = await store.reauthRequired(first.tokens.account);
    expect(mark?.reason).toMatch(/POST \/retrieve-token rejected the configured clientId\/clientSecret \(HTTP 401/);

    // No interceptor left: any request would fail with a network error, not the typed one.
    const again = await getLoad(first, 'A').catch((error: unknown) => error);
    expect(again).toBeInstanceOf(ReauthRequiredError);
    expect(String((again as Error).message)).toContain(`account ${first.tokens.account} needs re-authentication`);
    // A second process with the same credentials sees the mark in the store, and asks nothing either.
    const sibling = client(store, 'wrong-secret-1');
    await expect(sibling.tokens.accessToken()).rejects.toBeInstanceOf(ReauthRequiredError);

    // `check` tries once more despite the mark; success clears it.
    nock(BASE).post('/retrieve-token').reply(200, envelope({ access_token: jwt(3600), refresh_token: 'refresh-1' }));
    await expect(first.tokens.reauthenticate()).resolves.toEqual(expect.any(String));
    expect(await store.reauthRequired(first.tokens.account)).toBeUndefined();
  });

  it('a config with another secret for the same account is not held back by the old mark, and its success clears it', async () => {
    const store = new InMemoryTokenStore();
    nock(BASE).post('/retrieve-token').reply(403, { status: 403, message: 'no' });
    const wrong = client(store, 'wrong-secret-2');
    await expect(wrong.tokens.accessToken()).rejects.toBeInstanceOf(ReauthRequiredError);
    const fixed = client(store, 'right-secret-2');
    expect(fixed.tokens.account).toBe(wrong.tokens.account);
    expect(await fixed.tokens.reauthRequired()).toBeUndefined();
    nock(BASE).post('/retrieve-token').reply(200, envelope({ access_token: jwt(3600), refresh_token: 'refresh-2' }));
    await expect(fixed.tokens.accessToken()).resolves.toEqual(expect.any(String));
    expect(await store.reauthRequired(fixed.tokens.account)).toBeUndefined();
  });

  it('the auth-lost condition reads the shared mark (async source) and opens once', async () => {
    const sources: ConditionSources = {
      streams: [],
      runs: { lastVerdicts: async () => [], lastSuccesses: async () => [] },
      outbox: { deadLetters: async () => [] },
      quarantine: { counts: async () => [] },
      auth: async () => ({ state: 'lost', message: 'account main|x|y is reauth_required since 2030-01-01T00:00:00.000Z: refresh token rejected' }),
      reconcile: () => undefined,
    };
    const observed = await evaluateConditions(sources, { streamFailures: 3, now: new Date() });
    const first = diffConditions([], observed);
    expect(first.opened.map((c) => [c.kind, c.subject])).toEqual([['auth-lost', 'api']]);
    expect(first.opened[0]!.summary).toContain('reauth_required');
    const announced = first.opened.map((c) => ({ key: `${c.kind}:${c.subject}`, kind: c.kind, subject: c.subject, summary: c.summary, opened_at: '' }));
    expect(diffConditions(announced, await evaluateConditions(sources, { streamFailures: 3, now: new Date() })).opened).toEqual([]);
  });
});
