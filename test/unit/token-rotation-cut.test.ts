import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/api-client.js';
import { ReauthRequiredError } from '../../src/api/errors.js';
import { getLoad } from '../../src/api/endpoints/loads.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { jwt } from '../helpers/test-jwt.js';

/**
 * Brokerage `GET /generate-new-token` answered 2xx with a body that cannot be read: the server
 * rotated, the new pair is lost, the old refresh token is dead. It is not presented again (a
 * retry would only spend it, and a server may take a rotated-away token for a stolen one).
 */
const BASE = 'http://rotation-cut.test.local/v1';
const envelope = (data: unknown) => ({ _object: '/api/response', self: '/x', version: '1.0.0', data, error: null });
function clientOptions(credentials: ConstructorParameters<typeof ApiClient>[0]['credentials']): ConstructorParameters<typeof ApiClient>[0] {
  return {
    baseUrl: BASE,
    variant: 'brokerage',
    credentials,
    tokenStore: new InMemoryTokenStore(),
    logger: capturingLogger().logger,
    rateLimit: { requestsPerSecond: 1000, maxInFlight: 4, adaptive: false },
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, maxElapsedMs: 5_000 },
  };
}
function client(credentials: ConstructorParameters<typeof ApiClient>[0]['credentials']): ApiClient {
  return new ApiClient(clientOptions(credentials));
}
const CUT = '{"_object":"/api/response","self":"/generate-new-token","version":"1.0.0","data":{"token":"eyJ';

/** Up to four `GET /generate-new-token`, each answered 2xx with a body cut short; counts them. */
function answerRotationsCut(): { count: number } {
  const rotations = { count: 0 };
  nock(BASE)
    .get('/generate-new-token')
    .times(4)
    .reply(() => {
      rotations.count += 1;
      return [200, CUT, { 'content-type': 'application/json' }];
    });
  return rotations;
}

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

describe('a rotation that failed after it may have rotated', () => {
  it('on a bare pair: retried, the only way to learn whether it rotated', async () => {
    let rotations = 0;
    const access = jwt(3600);
    nock(BASE)
      .get('/generate-new-token')
      .reply(() => {
        rotations += 1;
        return [502, { status: 502, message: 'bad gateway' }];
      })
      .get('/generate-new-token')
      .reply(() => {
        rotations += 1;
        return [200, envelope({ token: access, refresh_token: 'refresh-1' })];
      })
      .get('/loads/B1')
      .reply(200, envelope({ _id: 'b1', reference_number: 'B1' }));
    const api = client({ accessToken: jwt(-60), refreshToken: 'refresh-0' });
    expect((await getLoad(api, 'B1')).reference_number).toBe('B1');
    expect(rotations).toBe(2);
  });
});

describe('a rotation answered later than api.timeout', () => {
  it('on a bare pair: the slow answer is waited for and stored, not given up on (the server has rotated by then)', async () => {
    let rotations = 0;
    const access = jwt(3600);
    nock(BASE)
      .get('/generate-new-token')
      .delay(300)
      .reply(() => {
        rotations += 1;
        return [200, envelope({ token: access, refresh_token: 'refresh-1' })];
      })
      .get('/generate-new-token')
      .reply(() => {
        rotations += 1;
        return [401, { status: 401, message: 'refresh token is invalid or has been replaced' }];
      })
      .get('/loads/B1')
      .reply(200, envelope({ _id: 'b1', reference_number: 'B1' }));
    const store = new InMemoryTokenStore();
    // Reads give up after 100 ms; the rotation waits as long as its lock allows.
    const api = new ApiClient({ ...clientOptions({ accessToken: jwt(-60), refreshToken: 'refresh-0' }), tokenStore: store, timeoutMs: 100 });
    expect((await getLoad(api, 'B1')).reference_number).toBe('B1');
    expect(rotations).toBe(1);
    expect((await store.load(api.tokens.account))?.refreshToken).toBe('refresh-1');
  });
});

describe('a rotation answered 2xx but unreadable', () => {
  it('bare pair: the account is marked reauth_required at once, the dead refresh token is not presented again', async () => {
    const rotations = answerRotationsCut();
    const api = client({ accessToken: jwt(-60), refreshToken: 'refresh-0' });
    const error = await getLoad(api, 'B1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthRequiredError);
    expect(String((error as Error).message)).toContain('GET /generate-new-token answered HTTP 200 with a body that could not be read: the server rotated the refresh token and the new pair is lost');
    expect(rotations.count).toBe(1);
  });

});

describe('brokerage with client credentials', () => {
  it('a refresh takes a new access token from POST /retrieve-token: no rotation is sent, so no answer cut short can lose the pair', async () => {
    const access = jwt(3600);
    nock(BASE)
      .post('/retrieve-token')
      .reply(200, envelope({ access_token: 'first-access-token', refresh_token: 'refresh-0' }))
      // The first access token is refused (expired at the server): a refresh follows.
      .get('/loads/B1')
      .reply(401, { status: 401, message: 'access token is invalid or expired' })
      .post('/retrieve-token')
      .reply(200, envelope({ access_token: access, refresh_token: 'refresh-0' }))
      .get('/loads/B1')
      .matchHeader('authorization', `Bearer ${access}`)
      .reply(200, envelope({ _id: 'b1', reference_number: 'B1' }));
    // Answers a rotation (cut short, as the simulator's faults do) only to count it.
    const rotations = answerRotationsCut();
    const store = new InMemoryTokenStore();
    const api = new ApiClient({ ...clientOptions({ clientId: 'client-1', clientSecret: 'secret-value-123456' }), tokenStore: store });
    expect((await getLoad(api, 'B1')).reference_number).toBe('B1');
    expect(rotations.count).toBe(0);
    expect(await store.load(api.tokens.account)).toMatchObject({ accessToken: access, refreshToken: 'refresh-0' });
  });
});
