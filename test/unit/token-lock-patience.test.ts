import { describe, expect, it } from 'vitest';
import { ServerClock } from '../../src/api/server-clock.js';
import { TokenManager, type AuthCredentials, type TokenEndpoints } from '../../src/api/token-manager.js';
import type { ApiVariant } from '../../src/api/variant.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { LockingStore, until } from '../helpers/locking-token-store.js';
import { jwt } from '../helpers/test-jwt.js';

/**
 * A process waiting for another's token refresh (refreshLockPatienceMs). Cluster chaos: a main
 * account stalled ~30 s after a `SIGSTOP` of the replica holding its refresh lock, waiting for the
 * lock's whole life. On main `GET /token` leaves the refresh token valid (spec §5 item 7), so a
 * waiter refreshes by itself after a short wait, and so does one with client credentials, whose
 * `POST /retrieve-token` returns the valid refresh token (item 5). On a bare brokerage pair the
 * refresh rotates the pair and two of them at once would leave one side with a dead refresh
 * token: it keeps waiting.
 */

const CLIENT: AuthCredentials = { clientId: 'client-1', clientSecret: 'secret-value-123456' };

const PATIENCE_MS = 40;

function manager(
  variant: ApiVariant,
  store: LockingStore,
  endpoints: Partial<TokenEndpoints>,
  patienceMs = PATIENCE_MS,
  credentials: AuthCredentials = { accessToken: jwt(-10), refreshToken: 'refresh-0' },
) {
  const logs = capturingLogger();
  const tokens = new TokenManager({
    variant,
    credentials,
    store,
    account: `${variant}|patience-test`,
    clock: new ServerClock(),
    refreshBeforeExpiryMs: 60_000,
    logger: logs.logger,
    // The holder's lock outlives every test here: only patience can end the wait.
    refreshLockTtlMs: 120_000,
    refreshLockPollMs: 2,
    refreshLockPatienceMs: patienceMs,
    endpoints: {
      retrieveToken: () => Promise.reject(new Error('no client credentials expected')),
      refreshAccessToken: () => Promise.reject(new Error('no GET /token expected')),
      rotateTokens: () => Promise.reject(new Error('no rotation expected')),
      ...endpoints,
    },
  });
  return { tokens, logs };
}

describe('waiting for another process\'s token refresh', () => {
  it('main: after the patience, GET /token without the lock; the refresh token stays, the lock is never taken', async () => {
    const store = new LockingStore();
    const presented: string[] = [];
    const fresh = jwt(3600);
    const { tokens, logs } = manager('main', store, {
      refreshAccessToken: async (refreshToken) => {
        presented.push(refreshToken);
        return { access_token: fresh };
      },
    });
    // Before: the wait lasted the holder's lock (two minutes here), past this test's timeout.
    await expect(tokens.accessToken()).resolves.toBe(fresh);
    expect(presented).toEqual(['refresh-0']);
    expect(store.attempts).toBeGreaterThanOrEqual(2);
    expect(store.released).toBe(0);
    expect(await store.load('main|patience-test')).toMatchObject({ accessToken: fresh, refreshToken: 'refresh-0' });
    expect(logs.text()).toMatch(/refreshing without it/);
    await tokens.settled(600_000);
  });

  it('main: the holder\'s result stored within the patience is adopted; no request of its own', async () => {
    const store = new LockingStore();
    let calls = 0;
    const { tokens } = manager('main', store, { refreshAccessToken: async () => ((calls += 1), { access_token: jwt(3600) }) }, 60_000);
    const waiting = tokens.accessToken();
    await until(() => store.attempts >= 3);
    const theirs = jwt(3600);
    await store.save('main|patience-test', { accessToken: theirs, refreshToken: 'refresh-0', accessExpiresAt: null });
    await expect(waiting).resolves.toBe(theirs);
    expect(calls).toBe(0);
  });

  it('main: a failed refresh without the lock goes back to waiting for it, then refreshes under it', async () => {
    const store = new LockingStore();
    const presented: string[] = [];
    const fresh = jwt(3600);
    const { tokens } = manager('main', store, {
      refreshAccessToken: async (refreshToken) => {
        presented.push(refreshToken);
        if (presented.length === 1) throw new Error('socket hang up');
        return { access_token: fresh };
      },
    });
    const waiting = tokens.accessToken();
    await until(() => presented.length === 1);
    const attemptsAfterFailure = store.attempts;
    // Still waiting for the lock, with no second call of its own while the holder keeps it.
    await until(() => store.attempts >= attemptsAfterFailure + 20);
    expect(presented).toHaveLength(1);
    store.acquire = () => true;
    await expect(waiting).resolves.toBe(fresh);
    expect(presented).toEqual(['refresh-0', 'refresh-0']);
    expect(store.released).toBe(1);
  });

  it('main: a refresh token the holder replaced meanwhile is not overwritten; the holder\'s pair is adopted', async () => {
    const store = new LockingStore();
    const theirs = jwt(3600);
    const { tokens } = manager('main', store, {
      refreshAccessToken: async () => {
        // While this call is out, the holder fell back to client credentials: a new refresh token.
        await store.save('main|patience-test', { accessToken: theirs, refreshToken: 'refresh-new', accessExpiresAt: null });
        return { access_token: jwt(3600) };
      },
    });
    await expect(tokens.accessToken()).resolves.toBe(theirs);
    expect(await store.load('main|patience-test')).toMatchObject({ accessToken: theirs, refreshToken: 'refresh-new' });
  });

  it('brokerage on a bare pair: keeps waiting for the lock however long; no rotation is sent beside the holder\'s', async () => {
    const store = new LockingStore();
    const rotations: string[] = [];
    const { tokens } = manager('brokerage', store, {
      rotateTokens: async (refreshToken) => {
        rotations.push(refreshToken);
        return { token: jwt(3600), refresh_token: 'refresh-1' };
      },
    });
    const caller = new AbortController();
    const waiting = tokens.accessToken(caller.signal).catch((error: Error) => error.message);
    // Many times the patience.
    await until(() => store.attempts >= 100);
    expect(rotations).toEqual([]);
    caller.abort(new Error('gave up'));
    expect(await waiting).toBe('gave up');
    await tokens.settled(600_000);
    expect(rotations).toEqual([]);
  });

  it('brokerage with client credentials: after the patience, POST /retrieve-token without the lock; its refresh token kept, nothing rotated', async () => {
    const store = new LockingStore();
    // What the holder (or the account's first run) stored: an expired access token, the live refresh token.
    await store.save('brokerage|patience-test', { accessToken: jwt(-10), refreshToken: 'refresh-live', accessExpiresAt: new Date(Date.now() - 10_000).toISOString() });
    const fresh = jwt(3600);
    let retrieved = 0;
    const { tokens, logs } = manager(
      'brokerage',
      store,
      {
        retrieveToken: async (clientId) => {
          expect(clientId).toBe('client-1');
          retrieved += 1;
          return { access_token: fresh, refresh_token: 'refresh-live' };
        },
      },
      PATIENCE_MS,
      CLIENT,
    );
    await expect(tokens.accessToken()).resolves.toBe(fresh);
    expect(retrieved).toBe(1);
    expect(store.released).toBe(0);
    expect(await store.load('brokerage|patience-test')).toMatchObject({ accessToken: fresh, refreshToken: 'refresh-live' });
    expect(logs.text()).toMatch(/refreshing without it \(POST \/retrieve-token/);
    await tokens.settled(600_000);
  });

  it('brokerage with client credentials, the lock free: a refresh is POST /retrieve-token, never a rotation of the stored refresh token', async () => {
    const store = new LockingStore();
    store.acquire = () => true;
    await store.save('brokerage|patience-test', { accessToken: jwt(-10), refreshToken: 'refresh-live', accessExpiresAt: new Date(Date.now() - 10_000).toISOString() });
    const fresh = jwt(3600);
    const { tokens } = manager('brokerage', store, { retrieveToken: async () => ({ access_token: fresh, refresh_token: 'refresh-live' }) }, PATIENCE_MS, CLIENT);
    // The manager's default endpoints reject a rotation: reaching it fails the call.
    await expect(tokens.accessToken()).resolves.toBe(fresh);
    expect(store.released).toBe(1);
    expect(await store.load('brokerage|patience-test')).toMatchObject({ accessToken: fresh, refreshToken: 'refresh-live' });
  });

  it('main with client credentials and no tokens yet: after the patience, POST /retrieve-token without the lock', async () => {
    const store = new LockingStore();
    const fresh = jwt(3600);
    let retrieved = 0;
    const { tokens } = manager('main', store, { retrieveToken: async () => ((retrieved += 1), { access_token: fresh, refresh_token: 'refresh-live' }) }, PATIENCE_MS, CLIENT);
    await expect(tokens.accessToken()).resolves.toBe(fresh);
    expect(retrieved).toBe(1);
    expect(store.released).toBe(0);
    expect(await store.load('main|patience-test')).toMatchObject({ accessToken: fresh, refreshToken: 'refresh-live' });
    await tokens.settled(600_000);
  });
});
