import { describe, expect, it } from 'vitest';
import { ServerClock } from '../../src/api/server-clock.js';
import { TokenManager, type TokenManagerOptions } from '../../src/api/token-manager.js';
import { TOOK_OVER_EXPIRED_LOCK } from '../../src/contracts/token-store.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { LockingStore, until } from '../helpers/locking-token-store.js';
import { jwt } from '../helpers/test-jwt.js';

/**
 * Who waits for a shared token refresh, and for how long (refresh-party.ts). Cluster chaos seed
 * 43017: a replica's stop waited ~54 s for a brokerage refresh that only waited for another
 * process's late pair — it ran under its first caller's signal, joiners could not leave it, and
 * shutdown waited for it. A rotation already sent must still be waited for and stored.
 */

const ACCOUNT = 'brokerage|party-test';

function manager(store: LockingStore, rotate: TokenManagerOptions['endpoints']['rotateTokens']) {
  return new TokenManager({
    variant: 'brokerage',
    credentials: { accessToken: jwt(-10), refreshToken: 'refresh-0' },
    store,
    account: ACCOUNT,
    clock: new ServerClock(),
    refreshBeforeExpiryMs: 60_000,
    logger: capturingLogger().logger,
    // Long enough that a wait for the lock or for a late pair would outlast any test here.
    refreshLockTtlMs: 120_000,
    refreshLockPollMs: 2,
    endpoints: {
      retrieveToken: () => Promise.reject(new Error('not configured')),
      refreshAccessToken: () => Promise.reject(new Error('main only')),
      rotateTokens: rotate,
    },
  });
}

describe('the callers of a shared token refresh', () => {
  it('a caller whose signal aborts leaves at once; the refresh goes on for the others', async () => {
    const store = new LockingStore();
    const rotations: string[] = [];
    const tokens = manager(store, async (refreshToken) => {
      rotations.push(refreshToken);
      return { token: jwt(3600), refresh_token: 'refresh-1' };
    });
    const first = new AbortController();
    const second = new AbortController();
    const firstToken = tokens.accessToken(first.signal);
    const secondToken = tokens.accessToken(second.signal);
    await until(() => store.attempts >= 3);
    first.abort(new Error('tenure cut'));
    await expect(firstToken).rejects.toThrow('tenure cut');
    // The other process releases its lock: the refresh the second caller still waits for goes on.
    store.acquire = () => true;
    await expect(secondToken).resolves.toMatch(/\.sig$/);
    expect(rotations).toEqual(['refresh-0']);
    expect((await store.load(ACCOUNT))?.refreshToken).toBe('refresh-1');
  });

  it('the refresh stops waiting for another process once no caller waits for it', async () => {
    const store = new LockingStore();
    const tokens = manager(store, () => Promise.reject(new Error('no rotation expected')));
    const callers = [new AbortController(), new AbortController()];
    const waits = callers.map((c) => tokens.accessToken(c.signal).catch((error: Error) => error.message));
    await until(() => store.attempts >= 3);
    callers[0]!.abort(new Error('first gone'));
    callers[1]!.abort(new Error('second gone'));
    expect(await Promise.all(waits)).toEqual(['first gone', 'second gone']);
    // Before the fix the refresh kept polling the lock for its whole life (two minutes here).
    await tokens.settled(600_000);
    const attempts = store.attempts;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.attempts).toBe(attempts);
  });

  it('shutdown ends a wait for another process\'s late pair, unspent, and starts no refresh after', async () => {
    const store = new LockingStore();
    // The lock was taken over from a holder that never released it: the refresh waits for the
    // pair that holder's rotation may still store, before it would spend the refresh token.
    store.acquire = () => TOOK_OVER_EXPIRED_LOCK;
    const rotations: string[] = [];
    const tokens = manager(store, async (refreshToken) => {
      rotations.push(refreshToken);
      return { token: jwt(3600), refresh_token: 'refresh-1' };
    });
    // A caller without a signal of its own: only the shutdown can end its wait.
    const waiting = tokens.accessToken().catch((error: Error) => error.message);
    await until(() => store.attempts >= 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    tokens.stopWaiting();
    expect(await waiting).toMatch(/shutting down/);
    await tokens.settled(600_000);
    expect(rotations).toEqual([]);
    expect(store.released).toBeGreaterThanOrEqual(1);
    // Not lost: the refresh token was never spent, and nothing marked the account.
    expect((await store.load(ACCOUNT))?.refreshToken).toBe('refresh-0');
    expect(await store.reauthRequired(ACCOUNT)).toBeUndefined();
    await expect(tokens.accessToken()).rejects.toThrow(/shutting down/);
    expect(rotations).toEqual([]);
  });

  it('a rotation already sent is waited for and stored, though the shutdown came and its caller left', async () => {
    const store = new LockingStore();
    store.acquire = () => true;
    let answer: (() => void) | undefined;
    const tokens = manager(store, (_refreshToken, _signal, beforeSend) => {
      beforeSend?.();
      return new Promise((resolve) => (answer = () => resolve({ token: jwt(3600), refresh_token: 'refresh-1' })));
    });
    const caller = new AbortController();
    const token = tokens.accessToken(caller.signal).catch((error: Error) => error.message);
    await until(() => answer !== undefined);
    caller.abort(new Error('grace over'));
    expect(await token).toBe('grace over');
    tokens.stopWaiting();
    let settled = false;
    const settling = tokens.settled(600_000).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    answer!();
    await settling;
    expect((await store.load(ACCOUNT))?.refreshToken).toBe('refresh-1');
  });
});

describe('a refresh nobody waits for', () => {
  it('a caller whose signal was aborted before it asked leaves no unhandled rejection behind', async () => {
    const store = new LockingStore();
    store.acquire = () => true;
    const tokens = manager(store, () => Promise.reject(new Error('no rotation expected')));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const cut = new AbortController();
      cut.abort(new Error('tenure cut before the refresh'));
      await expect(tokens.accessToken(cut.signal)).rejects.toThrow('tenure cut before the refresh');
      // Unhandled rejections are reported once the microtask queue drains (nothing else may wait
      // for the refresh first: settled() would handle it).
      await until(() => store.released === 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
      await tokens.settled(600_000);
      expect(store.released).toBe(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
