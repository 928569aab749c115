import { describe, expect, it } from 'vitest';
import { TokenLockExpiredError } from '../../src/api/errors.js';
import { ServerClock } from '../../src/api/server-clock.js';
import { TokenManager, type TokenManagerOptions } from '../../src/api/token-manager.js';
import { InMemoryTokenStore } from '../../src/api/token-store.js';
import { TOOK_OVER_EXPIRED_LOCK } from '../../src/contracts/token-store.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { jwt } from '../helpers/test-jwt.js';

/**
 * Brokerage rotations and the cross-process refresh lock: a rotation is never sent once the lock
 * may have passed to someone else, and a process that took over a lock its holder never released
 * waits for the pair that holder's rotation may still store before it spends the refresh token.
 */

const ACCOUNT = 'brokerage|lock-test';

/** An in-memory store with the lock protocol: `acquire` decides what each acquisition answers. */
class LockingStore extends InMemoryTokenStore {
  acquire: () => boolean | typeof TOOK_OVER_EXPIRED_LOCK = () => true;
  /** Called on every load (the manager's polls): tests store the other process's pair from here. */
  onLoad: (n: number) => void = () => {};
  loads = 0;

  override async load(account: string) {
    this.onLoad(++this.loads);
    return super.load(account);
  }

  async acquireRefreshLock(): Promise<boolean | typeof TOOK_OVER_EXPIRED_LOCK> {
    return this.acquire();
  }

  async releaseRefreshLock(): Promise<void> {}
}

function manager(store: LockingStore, now: { ms: number }, rotate: TokenManagerOptions['endpoints']['rotateTokens']) {
  const capture = capturingLogger();
  const tokens = new TokenManager({
    variant: 'brokerage',
    credentials: { accessToken: jwt(-10), refreshToken: 'refresh-0' },
    store,
    account: ACCOUNT,
    clock: new ServerClock(),
    refreshBeforeExpiryMs: 60_000,
    logger: capture.logger,
    refreshLockTtlMs: 30_000,
    refreshLockPollMs: 1,
    monotonicNow: () => now.ms,
    endpoints: {
      retrieveToken: () => Promise.reject(new Error('not configured')),
      refreshAccessToken: () => Promise.reject(new Error('main only')),
      rotateTokens: rotate,
    },
  });
  return { tokens, capture };
}

describe('brokerage rotation and the refresh lock', () => {
  it('a rotation whose lock passed its deadline before the request went out is not sent', async () => {
    const store = new LockingStore();
    const now = { ms: 1_000 };
    const sent: string[] = [];
    const { tokens } = manager(store, now, async (refreshToken, _signal, beforeSend) => {
      // The process was paused between taking the lock and sending: 40 s later the lock may be another's.
      now.ms += 40_000;
      beforeSend?.();
      sent.push(refreshToken);
      return { token: jwt(3600), refresh_token: 'refresh-1' };
    });
    await expect(tokens.accessToken()).rejects.toBeInstanceOf(TokenLockExpiredError);
    expect(sent).toEqual([]);
    // Nothing was marked: the next refresh, with the lock fresh, goes ahead.
    expect(await store.reauthRequired(ACCOUNT)).toBeUndefined();
  });

  it('within the lock the rotation is sent', async () => {
    const store = new LockingStore();
    const now = { ms: 1_000 };
    const { tokens } = manager(store, now, async (_refreshToken, _signal, beforeSend) => {
      now.ms += 20_000;
      beforeSend?.();
      return { token: jwt(3600), refresh_token: 'refresh-1' };
    });
    await tokens.accessToken();
    expect((await store.load(ACCOUNT))?.refreshToken).toBe('refresh-1');
  });

  it('after taking over a lock its holder never released, the pair that holder stores late is adopted: the refresh token is not spent', async () => {
    const store = new LockingStore();
    const now = { ms: 1_000 };
    store.acquire = () => TOOK_OVER_EXPIRED_LOCK;
    const late = { accessToken: jwt(3600), refreshToken: 'refresh-late', accessExpiresAt: new Date(Date.now() + 3_600_000).toISOString() };
    let rotations = 0;
    const { tokens, capture } = manager(store, now, async () => {
      rotations += 1;
      return { token: jwt(3600), refresh_token: 'refresh-spent' };
    });
    // The paused holder resumes and stores its rotation's answer while this process waits.
    store.onLoad = (n) => {
      if (n === 5) void store.save(ACCOUNT, late);
    };
    expect(await tokens.accessToken()).toBe(late.accessToken);
    expect(rotations).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(capture.text()).toContain('waiting for the pair its rotation may still store before spending the refresh token');
  });

  it('settled() waits for a rotation in flight and the save of its pair (what shutdown awaits before closing the state)', async () => {
    // Cluster chaos: a replica restarted during a rotation closed its state database under it;
    // the pair the server had rotated to was never stored and the bare-pair account was lost.
    const store = new LockingStore();
    const now = { ms: 1_000 };
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let sent!: () => void;
    const inFlight = new Promise<void>((resolve) => (sent = resolve));
    const { tokens } = manager(store, now, async (_refreshToken, _signal, beforeSend) => {
      beforeSend?.();
      sent();
      await answered;
      return { token: jwt(3600), refresh_token: 'refresh-1' };
    });
    const refreshing = tokens.accessToken();
    await inFlight;
    let settled = false;
    const settling = tokens.settled().then(() => (settled = true));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    answer();
    await settling;
    expect((await store.load(ACCOUNT))?.refreshToken).toBe('refresh-1');
    await refreshing;
  });
});
