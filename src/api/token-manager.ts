import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import { abortReason, isAbortError, linkSignals, sleep, throwIfAborted } from '../util/abort.js';
import type { Logger } from '../util/logger.js';
import { registerSecret } from '../util/secrets.js';
import { ApiAuthError, ApiEncodingError, ApiError, ApiNetworkError, ApiResponseError, ReauthRequiredError, TokenLockExpiredError } from './errors.js';
import { readJwtTimes } from './jwt.js';
import { RefreshParty } from './refresh-party.js';
import type { TokenRecord } from './schemas/resources.js';
import type { ServerClock } from './server-clock.js';
import { TOOK_OVER_EXPIRED_LOCK, type ReauthMark, type StoredTokens, type TokenStore } from '../contracts/token-store.js';
import type { ApiVariant } from './variant.js';

/** Credentials from the config (spec §5): client id + secret, or a pre-issued token pair. */
export type AuthCredentials =
  | { clientId: string; clientSecret: string }
  | { accessToken?: string | undefined; refreshToken: string };

/** The raw token calls (spec §4.1), made without an access token. */
export interface TokenEndpoints {
  retrieveToken(clientId: string, clientSecret: string, signal?: AbortSignal): Promise<TokenRecord>;
  /** Main: `GET /token` — new access token, refresh token stays valid. */
  refreshAccessToken(refreshToken: string, signal?: AbortSignal): Promise<TokenRecord>;
  /**
   * Brokerage: `GET /generate-new-token` — new access AND refresh token; the old refresh token
   * dies. `beforeSend` runs right before the request is written (it throws to stop it unsent);
   * `answerWithinMs`: how long to wait for the answer when that is longer than `api.timeout`.
   */
  rotateTokens(refreshToken: string, signal?: AbortSignal, beforeSend?: () => void, answerWithinMs?: number): Promise<TokenRecord>;
}

export interface TokenManagerOptions {
  variant: ApiVariant;
  credentials: AuthCredentials;
  store: TokenStore;
  /** Key of this account in the store (base URL, variant and identity). */
  account: string;
  endpoints: TokenEndpoints;
  clock: ServerClock;
  refreshBeforeExpiryMs: number;
  logger: Logger;
  /**
   * How long a refresh may hold the account's cross-process lock (default 60 s): how long others
   * wait for a holder that hung, was paused, vanished or died on another host (one killed on this
   * host frees it at once, see SqlTokenStore.acquireRefreshLock). Its API call gets three quarters
   * of it. The daemon passes the account lease TTL, at least 30 s (compose.ts).
   */
  refreshLockTtlMs?: number;
  /** How often a process waiting for another's refresh looks at the store (default 250 ms). */
  refreshLockPollMs?: number;
  /**
   * How long a process waits for another's refresh before it refreshes itself, without the lock
   * (default 5 s), where that refresh spends nothing: main's `GET /token` leaves the refresh token
   * valid (spec §5 item 7), and `POST /retrieve-token` with client credentials returns the valid
   * one (item 5). Two processes refreshing at once then cost one request more, nothing else;
   * waiting for the lock's whole life instead stalled an account ~30 s behind a holder paused
   * mid-refresh (cluster chaos, a `SIGSTOP`). A bare brokerage pair always waits: its refresh
   * rotates the pair.
   */
  refreshLockPatienceMs?: number;
  /**
   * How long a look at the account's `reauth_required` mark is trusted before the store is read
   * again (default 1 s): a mark another process set pauses this one within that time.
   */
  reauthCheckMs?: number;
  /** Local time for the mark's `since` (default: the server clock). */
  now?: () => Date;
  /** A rotated pair stored later than this after the API answered is logged as a warning (default 250 ms). */
  slowRotationStoreMs?: number;
  /** Monotonic milliseconds for the refresh lock's deadline (default performance.now; tests move it). */
  monotonicNow?: () => number;
}

const DEFAULT_LOCK_TTL_MS = 60_000;
const DEFAULT_LOCK_POLL_MS = 250;
const DEFAULT_LOCK_PATIENCE_MS = 5_000;
/** takeRefreshLock's answer when the account may refresh without the lock (refreshLockPatienceMs). */
const REFRESH_WITHOUT_LOCK = Symbol('refresh without the lock');
const DEFAULT_REAUTH_CHECK_MS = 1_000;
/** Pauses before each new attempt to store a rotated pair whose save failed (~25 s in all). */
const UNSAVED_RETRY_DELAYS_MS = [100, 250, 500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000, 5_000];

/** A rotated pair stored later than this after the answer is reported (see reportExposure). */
const DEFAULT_SLOW_ROTATION_STORE_MS = 250;

/**
 * The token lifecycle of spec §5. One refresh at a time (single-flight): concurrent callers share
 * the refresh in progress, which matters doubly on brokerage where two parallel refreshes would
 * each rotate the refresh token and one of them would be left holding a dead one.
 *
 * The store is shared with other processes (`run` beside a `backfill`, replicas): a refresh
 * takes the account's lock in the store, re-reads the tokens under it and adopts them when
 * another process refreshed meanwhile — only then calls the API, with a deadline shorter than
 * the lock. A rejected refresh token is never the end before the store was read again.
 */
export class TokenManager {
  private current: StoredTokens | undefined;
  /**
   * A pair the server issued whose save failed (the state store unreachable for a moment): the
   * store still holds the pair it replaced, dead on brokerage. Written under the next lock
   * before the store is read again, so the store's stale pair never wins over it.
   */
  private unsaved: StoredTokens | undefined;
  /** The background save of a rotated pair whose first save failed (storeUnsavedSoon), while it runs. */
  private pendingSave: Promise<void> | undefined;
  private loading: Promise<void> | undefined;
  private refreshing: Promise<string> | undefined;
  /** The callers of the refresh in flight (refresh-party.ts). */
  private refreshParty: RefreshParty | undefined;
  /** Aborted by `stopWaiting` (shutdown): refreshes stop waiting for other processes, none starts. */
  private readonly stopping = new AbortController();
  /** The refresh in flight's caller check before a rotation is sent (accessToken's beforeRotation). */
  private beforeRotation: (() => void) | undefined;
  /** `<pid>:<unique>:<host>`: a lock left by a process of this host that no longer runs is taken over at once. */
  /** The refresh lock held now was taken from a holder whose deadline passed unreleased (see awaitLateRotation). */
  private tookOverExpiredLock = false;
  /**
   * Until when (monotonic ms) the refresh lock held now is surely still ours: its deadline was set
   * by the database after our acquire started. A rotation is not sent past it (assertLockHeld).
   */
  private lockValidUntil = Number.POSITIVE_INFINITY;
  private readonly holder = `${process.pid}:${randomUUID()}:${os.hostname()}`;
  refreshCount = 0;
  /** Refreshes avoided because another process had already stored newer tokens. */
  adoptedFromStore = 0;
  /** The last look at the account's reauth mark (monotonic ms), so a busy client reads it about once a second. */
  private markSeen: { at: number; mark: ReauthMark | undefined } | undefined;
  /** Set by `reauthenticate`: one attempt despite the mark (the user asked for it). */
  private ignoreMark = false;
  private readonly credentialsFingerprint: string;

  constructor(private readonly options: TokenManagerOptions) {
    this.credentialsFingerprint = fingerprintOf(options.credentials);
  }

  /** The key of this account in the token store (status, metrics, messages). */
  get account(): string {
    return this.options.account;
  }

  /**
   * The account's `reauth_required` mark, read from the store (shared by every process on the
   * state). A mark left by other credentials than the configured ones does not count: these were
   * never tried, and their first success clears it.
   */
  async reauthRequired(): Promise<ReauthMark | undefined> {
    const mark = await this.options.store.reauthRequired?.(this.options.account);
    const current = mark && mark.credentials !== null && mark.credentials !== this.credentialsFingerprint ? undefined : mark;
    this.markSeen = { at: performance.now(), mark: current };
    return current;
  }

  /**
   * `freight-sync check`: a usable access token even when the account is marked
   * `reauth_required` — one real attempt (refresh, then client credentials), which clears the
   * mark when it succeeds and renews it when it fails. Without a mark, the same as accessToken.
   */
  async reauthenticate(signal?: AbortSignal): Promise<string> {
    await this.ensureLoaded();
    if (!(await this.reauthRequired())) return this.accessToken(signal);
    // Whatever is held was judged dead: refresh once more under the lock (adopting only tokens
    // another process got since), and clear the mark when that gave a token.
    this.ignoreMark = true;
    try {
      await this.refreshing?.catch(() => undefined);
      const token = await this.refresh(signal, this.current?.accessToken ?? undefined);
      await this.options.store.clearReauthRequired?.(this.options.account);
      this.markSeen = { at: performance.now(), mark: undefined };
      return token;
    } finally {
      this.ignoreMark = false;
    }
  }

  /**
   * A usable access token, refreshed first when missing or about to expire. `beforeRotation`
   * runs right before a brokerage rotation is sent and throws to stop it: the caller's lease
   * check, so a replica whose tenure was cut does not rotate the account's refresh token (cluster
   * chaos: one did, 0.7 s after the cut, and was SIGKILLed before it stored the new pair — the
   * next holder found only the rotated-away one).
   */
  async accessToken(signal?: AbortSignal, beforeRotation?: () => void): Promise<string> {
    await this.ensureLoaded();
    await this.assertNotPaused(false);
    const token = this.current?.accessToken;
    if (token && !this.expiresSoon(this.current!)) return token;
    return this.refresh(signal, undefined, beforeRotation);
  }

  /**
   * The server answered 401 to `rejectedToken`. Refreshes once — unless another caller already
   * replaced that token, in which case the newer token is returned without a second refresh.
   */
  async onUnauthorized(rejectedToken: string, signal?: AbortSignal, beforeRotation?: () => void): Promise<string> {
    await this.ensureLoaded();
    await this.assertNotPaused(false);
    if (this.refreshing) return this.refreshParty!.join(this.refreshing, signal);
    const token = this.current?.accessToken;
    if (token && token !== rejectedToken) return token;
    if (this.current) this.current = { ...this.current, accessToken: null, accessExpiresAt: null };
    return this.refresh(signal, rejectedToken, beforeRotation);
  }

  /** Current state, for `status` and tests (never logged). */
  snapshot(): StoredTokens | undefined {
    return this.current ? { ...this.current } : undefined;
  }

  private ensureLoaded(): Promise<void> {
    // Memoized so concurrent first callers share one load (and one seeding of the store).
    this.loading ??= this.load();
    return this.loading;
  }

  private async load(): Promise<void> {
    const stored = await this.options.store.load(this.options.account);
    const credentials = this.options.credentials;
    if (stored && (stored.accessToken || stored.refreshToken)) {
      // The store wins over the config: on brokerage the configured refresh token has been
      // rotated away after the first refresh, and only the stored one is alive.
      this.current = stored;
    } else if ('refreshToken' in credentials) {
      this.current = {
        accessToken: credentials.accessToken ?? null,
        refreshToken: credentials.refreshToken,
        accessExpiresAt: expiryOf(credentials.accessToken ?? null),
      };
      await this.options.store.save(this.options.account, this.current);
    }
    registerSecret(this.current?.accessToken);
    registerSecret(this.current?.refreshToken);
  }

  private expiresSoon(tokens: StoredTokens): boolean {
    if (!tokens.accessExpiresAt || !tokens.accessToken) return false;
    const expiresAt = Date.parse(tokens.accessExpiresAt);
    if (Number.isNaN(expiresAt)) return false;
    // A short-lived token (seconds) must not be refreshed on every call: the margin is capped at
    // a quarter of its lifetime.
    const times = readJwtTimes(tokens.accessToken);
    const lifetime = times?.issuedAtMs !== undefined ? expiresAt - times.issuedAtMs : undefined;
    const margin = lifetime !== undefined ? Math.min(this.options.refreshBeforeExpiryMs, lifetime / 4) : this.options.refreshBeforeExpiryMs;
    return this.options.clock.now().getTime() >= expiresAt - margin;
  }

  private refresh(signal?: AbortSignal, rejectedToken?: string, beforeRotation?: () => void): Promise<string> {
    if (!this.refreshing) {
      if (this.stopping.signal.aborted) return Promise.reject(abortReason(this.stopping.signal));
      // The refresh is shared by whoever asks meanwhile; the first caller's check guards it. It
      // runs under the party's signal, not the first caller's: each caller leaves when its own
      // signal aborts, and the refresh stops waiting once none is left (refresh-party.ts).
      const party = new RefreshParty(this.stopping.signal);
      this.beforeRotation = beforeRotation;
      this.refreshParty = party;
      this.refreshing = this.refreshUnderLock(party.signal, rejectedToken).finally(() => {
        party.dispose();
        this.refreshing = undefined;
        this.refreshParty = undefined;
        this.beforeRotation = undefined;
      });
      // Each caller gets the outcome through its own join; when every caller has left (a caller
      // whose signal was already aborted never attaches to it), its failure must not surface as
      // an unhandled rejection, which ends the process (cluster chaos: a replica exited with the
      // LeaseLostError of a tenure cut before its refresh began).
      this.refreshing.catch(() => undefined);
    }
    return this.refreshParty!.join(this.refreshing, signal);
  }

  /**
   * Shutdown: a refresh in flight stops waiting for other processes (their lock, their late
   * rotation) and none starts. A rotation already sent is not cut: its answer is the account's
   * only live pair on brokerage, and `settled` waits for it to be stored.
   */
  stopWaiting(): void {
    this.stopping.abort(new Error('the API client is shutting down'));
  }

  /**
   * Throws ReauthRequiredError when the account is marked (by this process or another on the
   * same state) — no token endpoint is asked. `fresh`: read the store now (before a refresh);
   * otherwise a look less than `reauthCheckMs` old is trusted.
   */
  private async assertNotPaused(fresh: boolean): Promise<void> {
    if (this.ignoreMark) return;
    const seen = this.markSeen;
    const stale = fresh || !seen || performance.now() - seen.at >= (this.options.reauthCheckMs ?? DEFAULT_REAUTH_CHECK_MS);
    const mark = stale ? await this.reauthRequired() : seen.mark;
    if (mark) throw new ReauthRequiredError(this.options.account, mark.reason, mark.since, this.remedy());
  }

  /** What the user does about a lost token, for this kind of credentials. */
  private remedy(): string {
    return 'clientId' in this.options.credentials
      ? 'correct api.auth.clientId/clientSecret (or ask support for new ones), then run `freight-sync check` and restart the daemon; until then no API call is made for this account'
      : 'generate a new token pair in the developer settings and set it in api.auth (or configure clientId/clientSecret), then restart the daemon (`freight-sync check` verifies it); until then no API call is made for this account';
  }

  /**
   * The tokens are truly lost: marks the account in the shared store (every process pauses its
   * API work for it) and throws the typed error naming it and what to do.
   */
  private async markLost(reason: string, cause: unknown): Promise<never> {
    const { store, account, logger } = this.options;
    const since = (this.options.now?.() ?? this.options.clock.now()).toISOString();
    const mark: ReauthMark = { reason, since, credentials: this.credentialsFingerprint };
    try {
      await store.markReauthRequired?.(account, mark);
      this.markSeen = { at: performance.now(), mark };
    } catch (error) {
      logger.warn({ err: error }, 'could not mark the account reauth_required in the state store');
    }
    // A warning: the failed run (or command) that meets the error reports it once as an error.
    logger.warn({ account }, `authentication lost, account marked reauth_required: ${reason}`);
    throw new ReauthRequiredError(account, reason, since, this.remedy(), { cause });
  }

  private async refreshUnderLock(signal: AbortSignal | undefined, rejectedToken: string | undefined): Promise<string> {
    const { store, account, logger } = this.options;
    const ttlMs = this.options.refreshLockTtlMs ?? DEFAULT_LOCK_TTL_MS;
    await this.assertNotPaused(true);
    let waited = await this.takeRefreshLock(ttlMs, signal, rejectedToken, this.mayRefreshWithoutLock());
    if (waited === REFRESH_WITHOUT_LOCK) {
      const token = await this.refreshWithoutLock(ttlMs, signal, rejectedToken);
      if (token !== undefined) return token;
      // It failed: the usual way, under the lock, with the store read again and every fallback.
      waited = await this.takeRefreshLock(ttlMs, signal, rejectedToken, false);
    }
    if (typeof waited === 'string') return waited;
    try {
      if (this.unsaved) {
        await store.save(account, this.unsaved);
        this.unsaved = undefined;
      }
      // Under the lock: another process may have refreshed since these tokens were loaded.
      const adopted = await this.adoptNewerStored(rejectedToken);
      if (adopted !== undefined) return adopted;
      // …or found the tokens lost while this one waited for the lock.
      await this.assertNotPaused(true);
      const rotating = this.refreshRotates();
      if (rotating && this.tookOverExpiredLock && this.current?.refreshToken) {
        // Its holder is alive (paused, starved) or on another host: it may be inside a rotation
        // whose answer it will still store. Spending the refresh token now would present a dead
        // one (and lose the pair if the server rotated): wait for that first, then take the lock
        // for a full life again.
        const late = await this.awaitLateRotation(this.current.refreshToken, rejectedToken, signal, 'before refreshing');
        if (late !== undefined) return late;
        // Ours again for a full life (the wait may have used up most of it); someone else may
        // have refreshed meanwhile.
        const refreshedMeanwhile = await this.takeRefreshLock(ttlMs, signal, rejectedToken, false);
        if (typeof refreshedMeanwhile === 'string') return refreshedMeanwhile;
        // Still taken over: a holder paused even longer may store its pair after a rejection.
        this.tookOverExpiredLock = true;
      }
      // Nobody waits for this refresh any more (each caller's signal aborted, or shutdown): the
      // lock is released unspent rather than a rotation sent that no one needs.
      throwIfAborted(signal);
      // The API call must end before the lock can be taken over by someone else: a quarter of the
      // lock's life (at most 10 s) stays for writing the tokens and releasing it.
      const callMs = callDeadlineMs(ttlMs);
      // On brokerage the call rotates the refresh token: an answer that comes late (this process
      // was paused or starved past the deadline) is the only live pair there is, so it is kept
      // and stored rather than cut off (the transport's timeout still bounds the call). Others
      // that took the expired lock meanwhile find it in the store (awaitLateRotation).
      // Nor is it cut off by the caller's signal (a tenure cut when its lease passed during a
      // pause): the answer is stored for whoever works the account next.
      const rotates = this.refreshRotates();
      const deadline = rotates ? new AbortController().signal : AbortSignal.timeout(callMs);
      // Not AbortSignal.any: the caller's signal can be the daemon's, alive for months (linkSignals).
      const callSignal = signal && !rotates ? linkSignals([signal, deadline]) : { signal: deadline, dispose: () => undefined };
      try {
        return await this.doRefresh(callSignal.signal, rejectedToken);
      } catch (error) {
        if (deadline.aborted && !signal?.aborted && isAbortError(error)) {
          throw new ApiAuthError(`the token refresh of ${account} did not finish within ${(callMs / 1000).toFixed(1)} s`, { cause: error });
        }
        throw error;
      } finally {
        callSignal.dispose();
      }
    } finally {
      // A rotated pair that could not be stored keeps the lock: released, the next process would
      // read the store's pair — rotated away — and spend it (cluster chaos: a replica's database
      // connections terminated under its save). storeUnsavedSoon releases it once the pair is
      // stored; until then, or until the lock expires, others wait for that pair.
      if (!this.unsaved) await this.releaseRefreshLock();
    }
  }

  private async releaseRefreshLock(): Promise<void> {
    const { store, account, logger } = this.options;
    await store.releaseRefreshLock?.(account, this.holder).catch((error: unknown) => logger.warn({ err: error }, 'could not release the token refresh lock; it expires on its own'));
  }

  /**
   * A rotation is sent only while the refresh lock is surely ours: past its deadline another
   * process may have taken it over and rotated, and this refresh token would be a dead one (a
   * process paused between the lock and the call, say). Not sent, the refresh fails and the
   * caller's next one finds the other's pair in the store.
   */
  private monotonicNow(): number {
    return this.options.monotonicNow?.() ?? performance.now();
  }

  private assertLockHeld(): void {
    if (this.monotonicNow() < this.lockValidUntil) return;
    throw new TokenLockExpiredError(this.options.account);
  }

  /**
   * Polls the store, for at most the refresh lock's TTL, for a refresh token other than `spent`
   * (stored by a process whose rotation outlived its lock); adopts it and returns its access
   * token, or refreshes with it. Undefined when none came: the token is truly lost.
   */
  private async awaitLateRotation(
    spent: string,
    rejectedToken: string | undefined,
    signal: AbortSignal | undefined,
    when: 'before refreshing' | 'after a rejection' = 'after a rejection',
  ): Promise<string | undefined> {
    // Only a holder whose lock expired unreleased can still be inside a rotation.
    if (!this.tookOverExpiredLock) return undefined;
    const { logger } = this.options;
    const until = performance.now() + (this.options.refreshLockTtlMs ?? DEFAULT_LOCK_TTL_MS);
    logger.warn(
      when === 'before refreshing'
        ? 'the token refresh lock was taken over from a holder that did not release it: waiting for the pair its rotation may still store before spending the refresh token'
        : 'the refresh token was rejected: waiting for another process that may have rotated it to store the new pair',
    );
    while (performance.now() < until) {
      await sleep(this.options.refreshLockPollMs ?? DEFAULT_LOCK_POLL_MS, signal);
      const adopted = await this.adoptNewerStored(rejectedToken);
      if (adopted !== undefined) return adopted;
      if (this.current?.refreshToken && this.current.refreshToken !== spent) {
        logger.info('another process stored a newer refresh token; refreshing with it');
        throwIfAborted(signal);
        // A brokerage rotation once sent is not cut by the signal (as in refreshUnderLock).
        const callSignal = this.refreshRotates() ? new AbortController().signal : (signal ?? new AbortController().signal);
        return this.doRefresh(callSignal, rejectedToken, true);
      }
    }
    return undefined;
  }

  /**
   * Takes the account's refresh lock. While another process holds it, waits for its result in
   * the store and returns that access token instead (undefined once the lock is ours).
   */
  private async takeRefreshLock(
    ttlMs: number,
    signal: AbortSignal | undefined,
    rejectedToken: string | undefined,
    patient: boolean,
  ): Promise<string | typeof REFRESH_WITHOUT_LOCK | undefined> {
    const { store, account, logger } = this.options;
    if (!store.acquireRefreshLock) return undefined;
    let announced = false;
    const goAheadAt = patient ? this.monotonicNow() + (this.options.refreshLockPatienceMs ?? DEFAULT_LOCK_PATIENCE_MS) : Number.POSITIVE_INFINITY;
    for (;;) {
      const startedAt = this.monotonicNow();
      const acquired = await store.acquireRefreshLock(account, this.holder, ttlMs);
      if (acquired) {
        this.tookOverExpiredLock = acquired === TOOK_OVER_EXPIRED_LOCK;
        this.lockValidUntil = startedAt + ttlMs - Math.min(500, ttlMs / 10);
        return undefined;
      }
      if (!announced) logger.debug('another process is refreshing the tokens of this account; waiting for its result');
      announced = true;
      // Polling the shared store is the only way to hear from another process.
      await sleep(this.options.refreshLockPollMs ?? DEFAULT_LOCK_POLL_MS, signal);
      const adopted = await this.adoptNewerStored(rejectedToken);
      if (adopted !== undefined) return adopted;
      if (this.monotonicNow() >= goAheadAt && this.mayRefreshWithoutLock()) return REFRESH_WITHOUT_LOCK;
    }
  }

  private hasClientCredentials(): boolean {
    return 'clientId' in this.options.credentials;
  }

  /**
   * Whether a refresh now rotates the refresh token: brokerage's `GET /generate-new-token`, on a
   * bare pair. With client credentials brokerage takes new access tokens from `POST
   * /retrieve-token` instead, which returns the valid refresh token rather than replacing it
   * (spec §5 item 5): nothing is spent, so no answer can be lost with the only live pair in it.
   */
  private refreshRotates(): boolean {
    return this.options.variant === 'brokerage' && !this.hasClientCredentials() && Boolean(this.current?.refreshToken);
  }

  /**
   * Whether the refresh call spends nothing (main's `GET /token` with a refresh token, or client
   * credentials), so the lock only saves requests and a holder stuck in it need not be waited for.
   */
  private mayRefreshWithoutLock(): boolean {
    if (this.unsaved) return false;
    return this.hasClientCredentials() || (this.options.variant === 'main' && Boolean(this.current?.refreshToken));
  }

  /**
   * A refresh that spends nothing (mayRefreshWithoutLock) without the refresh lock, once another
   * process held it past refreshLockPatienceMs (a holder paused or starved mid-refresh): main's
   * `GET /token` with the refresh token held, else `POST /retrieve-token`. On any failure (the
   * refresh token or the client credentials rejected, the store not written) undefined, and the
   * caller waits for the lock and takes the usual path, where a rejection is judged with the store
   * read again and the account marked lost only then.
   */
  private async refreshWithoutLock(ttlMs: number, signal: AbortSignal | undefined, rejectedToken: string | undefined): Promise<string | undefined> {
    const { store, account, endpoints, logger, credentials, variant } = this.options;
    const refreshToken = this.current?.refreshToken ?? null;
    const viaRefreshToken = variant === 'main' && refreshToken !== null;
    const request = viaRefreshToken
      ? (callSignal: AbortSignal) => endpoints.refreshAccessToken(refreshToken, callSignal)
      : 'clientId' in credentials
        ? (callSignal: AbortSignal) => endpoints.retrieveToken(credentials.clientId, credentials.clientSecret, callSignal)
        : undefined;
    if (!request) return undefined;
    const call = viaRefreshToken ? 'GET /token' : 'POST /retrieve-token';
    logger.info({ account }, `another process has held the token refresh lock too long; refreshing without it (${call} does not replace a valid refresh token)`);
    const deadline = AbortSignal.timeout(callDeadlineMs(ttlMs));
    const callSignal = signal ? linkSignals([signal, deadline]) : { signal: deadline, dispose: () => undefined };
    try {
      this.refreshCount += 1;
      const record = await request(callSignal.signal);
      const accessToken = pickAccessToken(record, call);
      if (accessToken === rejectedToken) return undefined;
      registerSecret(accessToken);
      registerSecret(record.refresh_token ?? null);
      const next: StoredTokens = { accessToken, refreshToken: record.refresh_token ?? refreshToken, accessExpiresAt: expiryOf(accessToken) };
      // Not over a refresh token someone stored meanwhile (the holder fell back to client
      // credentials, or rotated: an older replica on a brokerage account) unless it is the one
      // just received: the lock path adopts that one instead.
      const stored = await store.load(account);
      if (stored?.refreshToken && stored.refreshToken !== refreshToken && stored.refreshToken !== next.refreshToken) return undefined;
      await store.save(account, next);
      this.current = next;
      logger.debug({ expiresAt: next.accessExpiresAt }, 'access token refreshed without the lock');
      return accessToken;
    } catch (error) {
      throwIfAborted(signal);
      logger.warn({ err: error, account }, 'the token refresh without the lock failed; waiting for the lock');
      return undefined;
    } finally {
      callSignal.dispose();
    }
  }

  /**
   * Adopts the stored tokens when they differ from the ones held (another process refreshed):
   * the newest refresh token always wins, since on brokerage the one held may be dead. Returns
   * the stored access token when it is usable (not the one just rejected, not about to expire).
   */
  private async adoptNewerStored(rejectedToken: string | undefined): Promise<string | undefined> {
    const stored = await this.options.store.load(this.options.account);
    if (!stored || (!stored.accessToken && !stored.refreshToken)) return undefined;
    const held = this.current;
    if (held && stored.refreshToken === held.refreshToken && stored.accessToken === held.accessToken) return undefined;
    registerSecret(stored.accessToken);
    registerSecret(stored.refreshToken);
    this.current = stored;
    if (stored.accessToken && stored.accessToken !== rejectedToken && !this.expiresSoon(stored)) {
      this.adoptedFromStore += 1;
      this.options.logger.debug('adopted tokens another process refreshed');
      return stored.accessToken;
    }
    return undefined;
  }

  private async doRefresh(signal: AbortSignal, rejectedToken: string | undefined, storeRereadDone = false): Promise<string> {
    const { variant, credentials, endpoints, logger } = this.options;
    const refreshToken = this.current?.refreshToken ?? null;
    const hasClientCredentials = 'clientId' in credentials;
    this.refreshCount += 1;

    // Brokerage with client credentials: `POST /retrieve-token` (below) gives a new access token
    // and keeps the refresh token; a rotation would only put the pair at stake.
    if (refreshToken && !(variant === 'brokerage' && hasClientCredentials)) {
      try {
        if (variant === 'main') {
          const record = await endpoints.refreshAccessToken(refreshToken, signal);
          const accessToken = pickAccessToken(record, 'GET /token');
          return await this.adopt({ accessToken, refreshToken: record.refresh_token ?? refreshToken });
        }
        const sentAt = performance.now();
        // Once sent, the answer is the only copy of the new pair: a slow one is waited for as long
        // as the lock allows the call (not the shorter api.timeout), as a request given up on
        // after the server rotated leaves a bare pair nothing but a dead refresh token.
        const answerWithinMs = callDeadlineMs(this.options.refreshLockTtlMs ?? DEFAULT_LOCK_TTL_MS);
        const record = await endpoints.rotateTokens(
          refreshToken,
          signal,
          () => {
            this.assertLockHeld();
            this.beforeRotation?.();
          },
          answerWithinMs,
        );
        const answeredAt = performance.now();
        const accessToken = pickAccessToken(record, 'GET /generate-new-token');
        if (!record.refresh_token) {
          logger.warn('GET /generate-new-token returned no refresh_token; keeping the previous one');
        }
        const token = await this.adopt({ accessToken, refreshToken: record.refresh_token ?? refreshToken }, refreshToken);
        this.reportExposure(answeredAt - sentAt, performance.now() - answeredAt);
        return token;
      } catch (error) {
        const recovered = await this.afterFailedRefresh(error, refreshToken, rejectedToken, signal, storeRereadDone);
        if (recovered !== undefined) return recovered;
      }
    }

    if (hasClientCredentials) {
      let record: TokenRecord;
      try {
        record = await endpoints.retrieveToken(credentials.clientId, credentials.clientSecret, signal);
      } catch (error) {
        // A refused encoding is about api.requestEncoding, not the credentials: its own message says so.
        if (error instanceof ApiError && !(error instanceof ApiEncodingError) && (error.status === 401 || error.status === 403)) {
          return this.markLost(`POST /retrieve-token rejected the configured clientId/clientSecret (HTTP ${error.status}: ${error.serverMessage})`, error);
        }
        if (error instanceof ApiError && !(error instanceof ApiEncodingError) && error.status === 400) {
          throw new ApiAuthError(
            `POST /retrieve-token rejected the configured clientId/clientSecret (HTTP ${error.status}: ${error.serverMessage})`,
            { cause: error },
          );
        }
        throw error;
      }
      const accessToken = pickAccessToken(record, 'POST /retrieve-token');
      return this.adopt({ accessToken, refreshToken: record.refresh_token ?? null });
    }
    throw new ApiAuthError('no access token and no way to get one: configure api.auth (clientId/clientSecret or a token pair)');
  }

  /**
   * From the moment the server rotated the refresh token until the new pair is stored, a crash of
   * this process (SIGKILL, OOM, power) loses the account's only credential on a bare token pair:
   * nothing else knows the new pair, and the old one is dead. Storing is slow when the state
   * database is (a full pool, a slow WAL flush): say so, with the figures, so an operator sees the
   * exposure before a crash turns it into `reauth_required`.
   */
  private reportExposure(callMs: number, storeMs: number): void {
    if (storeMs < (this.options.slowRotationStoreMs ?? DEFAULT_SLOW_ROTATION_STORE_MS)) return;
    this.options.logger.warn(
      { account: this.options.account, callMs: Math.round(callMs), storeMs: Math.round(storeMs) },
      `the rotated refresh token was stored ${Math.round(storeMs)} ms after the API answered (the call took ${Math.round(callMs)} ms): a crash in that time loses this account's only token pair; the state database is slow`,
    );
  }

  /**
   * A refresh with `refreshToken` failed: returns an access token found another way, throws what
   * cannot be recovered (marking the account lost when the tokens are), or returns undefined for
   * the caller to retrieve new tokens with client credentials (configured then).
   */
  private async afterFailedRefresh(error: unknown, refreshToken: string, rejectedToken: string | undefined, signal: AbortSignal, storeRereadDone: boolean): Promise<string | undefined> {
    const { variant, credentials, logger } = this.options;
    const hasClientCredentials = 'clientId' in credentials;
    if (variant === 'brokerage' && error instanceof ApiResponseError && error.status >= 200 && error.status < 300) {
      // The server rotated (it answered 2xx) but the answer could not be read: the new pair is lost
      // and the old refresh token dead. Presenting it again would only spend it (a server may take
      // a rotated-away token for a stolen one and revoke the whole family).
      const lost = `GET /generate-new-token answered HTTP ${error.status} with a body that could not be read: the server rotated the refresh token and the new pair is lost`;
      if (!hasClientCredentials) return this.markLost(`${lost}, and no clientId/clientSecret is configured`, error);
      logger.warn({ status: error.status }, `${lost}; retrieving new tokens with client credentials`);
      return undefined;
    }
    const rejected = error instanceof ApiError && (error.status === 401 || error.status === 403);
    if (!rejected) throw error;
    // Someone outside the lock (an older version, a lock that expired) may have rotated the
    // token: the store holds the live one then.
    if (!storeRereadDone) {
      const adopted = await this.adoptNewerStored(rejectedToken);
      if (adopted !== undefined) return adopted;
      if (this.current?.refreshToken && this.current.refreshToken !== refreshToken) {
        logger.warn('the refresh token was rejected but the store holds a newer one; refreshing with it');
        return this.doRefresh(signal, rejectedToken, true);
      }
    }
    if (!hasClientCredentials) {
      // A refresher whose lock expired while it was paused or starved (its deadline passed, so
      // this one took over) may still be about to store the pair its rotation received: give it
      // the lock's life before giving the account up for lost.
      const late = await this.awaitLateRotation(refreshToken, rejectedToken, signal);
      if (late !== undefined) return late;
      return this.markLost(
        `the refresh token was rejected (HTTP ${error.status}) by ${variant === 'main' ? 'GET /token' : 'GET /generate-new-token'}, also after re-reading the state store, and no clientId/clientSecret is configured`,
        error,
      );
    }
    logger.warn({ status: error.status }, 'refresh token rejected; retrieving new tokens with client credentials');
    return undefined;
  }

  /** Persists the new tokens — before anyone uses them — and makes them current. */
  private async adopt(tokens: { accessToken: string; refreshToken: string | null }, rotatedFrom: string | null = null): Promise<string> {
    registerSecret(tokens.accessToken);
    registerSecret(tokens.refreshToken);
    const next: StoredTokens = {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      accessExpiresAt: expiryOf(tokens.accessToken),
    };
    // Used only once stored (the TokenStore contract): a request made with the new access token
    // before the commit would tell the server the answer arrived while a crash in between still
    // loses the pair. Meanwhile this process's requests keep the previous access token (several
    // are valid at once, spec §5 item 4); one that expired waits for this refresh.
    try {
      await this.options.store.save(this.options.account, next);
      this.unsaved = undefined;
      this.current = next;
    } catch (error) {
      // Held all the same: the server has rotated the pair already, so the old refresh token is
      // dead and the new one must not be lost. The refresh lock stays ours until it is stored
      // (refreshUnderLock, storeUnsavedSoon).
      this.current = next;
      this.unsaved = next;
      this.storeUnsavedSoon(next, rotatedFrom);
      throw error;
    }
    // Tokens were had: whatever mark the account carried is void (check, new credentials). One
    // small delete per refresh, under the refresh lock, so it cannot undo a newer mark.
    await this.options.store.clearReauthRequired?.(this.options.account);
    if (this.markSeen?.mark || this.ignoreMark) this.options.logger.info({ account: this.options.account }, 'authentication works again; reauth_required cleared');
    this.markSeen = { at: performance.now(), mark: undefined };
    this.options.logger.debug({ expiresAt: next.accessExpiresAt }, 'access token refreshed');
    return tokens.accessToken;
  }
  /**
   * A rotated pair whose save failed is the account's only live credential, held in this process's
   * memory alone. Stored again at once in the background (the pool replaces a dropped connection
   * on the next query), not only at this process's next refresh: another process that took over
   * the refresh lock meanwhile waits for exactly this pair in the store before it would spend the
   * rotated-away refresh token (cluster chaos: a replica SIGSTOPped inside a rotation came back to
   * a terminated connection; the other's wait ran out and the bare-pair account was lost). Not
   * stored over a refresh token other than the one this pair replaced (someone else's newer pair).
   */
  private storeUnsavedSoon(next: StoredTokens, rotatedFrom: string | null): void {
    const { store, account, logger } = this.options;
    const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
    const saving = (async () => {
      for (let attempt = 1; attempt <= UNSAVED_RETRY_DELAYS_MS.length; attempt++) {
        await pause(UNSAVED_RETRY_DELAYS_MS[attempt - 1]!);
        if (this.unsaved !== next) return;
        try {
          const stored = await store.load(account);
          if (stored?.refreshToken && stored.refreshToken !== rotatedFrom && stored.refreshToken !== next.refreshToken) {
            logger.warn('a rotated token pair could not be stored, and the store has another refresh token since: keeping that one');
            // Nor is it written at this process's next refresh, and the lock kept for it goes.
            if (this.unsaved === next) this.unsaved = undefined;
            if (!this.refreshing) await this.releaseRefreshLock();
            return;
          }
          await store.save(account, next);
          if (this.unsaved === next) this.unsaved = undefined;
          logger.info({ attempt }, 'the rotated token pair is stored now (storing it failed right after the rotation)');
          // The lock kept since the rotation (refreshUnderLock) — unless a refresh of this
          // process holds it again now and releases it itself.
          if (!this.refreshing && !this.unsaved) await this.releaseRefreshLock();
          return;
        } catch (error) {
          logger.warn({ err: error, attempt }, 'storing the rotated token pair failed again; retrying');
        }
      }
    })();
    const tracked: Promise<void> = saving.finally(() => {
      if (this.pendingSave === tracked) this.pendingSave = undefined;
    });
    this.pendingSave = tracked;
  }

  /**
   * Resolves once no refresh is in flight and no rotated pair waits to be stored, or after
   * `maxWaitMs` (`stopWaiting` first ends a refresh that only waits for another process; a
   * rotation's answer may take that long). Shutdown awaits it before it closes the transport and the state
   * database: on brokerage a rotation in flight is the account's only live pair, and closing under
   * it (a rolling restart) lost the pair and locked a bare-pair account out (cluster chaos).
   */
  async settled(maxWaitMs = 30_000): Promise<void> {
    const both = (async () => {
      await this.refreshing?.catch(() => undefined);
      await this.pendingSave;
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([both, new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
    clearTimeout(timer);
  }

}

/** How long a refresh's API call may take under a lock of `ttlMs`: always less than the lock lives. */
export function callDeadlineMs(ttlMs: number): number {
  return Math.max(1, Math.round(ttlMs - Math.min(10_000, ttlMs / 4)));
}

function pickAccessToken(record: TokenRecord, route: string): string {
  const token = record.access_token ?? record.token;
  if (!token) throw new ApiAuthError(`${route} answered without an access token`);
  return token;
}

function expiryOf(accessToken: string | null): string | null {
  if (!accessToken) return null;
  const times = readJwtTimes(accessToken);
  return times ? new Date(times.expiresAtMs).toISOString() : null;
}

/** Identifies the configured credentials without revealing them (the reauth mark stores it). */
function fingerprintOf(credentials: AuthCredentials): string {
  const identity = 'clientId' in credentials ? `client:${credentials.clientId}:${credentials.clientSecret}` : `pair:${credentials.refreshToken}`;
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}
