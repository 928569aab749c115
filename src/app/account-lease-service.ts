import { performance } from 'node:perf_hooks';
import { describeHolder, isLeaseLostError, LeaseLostError, type Fence, type HandOverRequest, type Lease, type LeaseStore } from '../state/leases/index.js';
import { sleep } from '../util/abort.js';
import type { Logger } from '../util/logger.js';
import { startDaemon, type DaemonRunner, type DaemonService } from './daemon.js';

export type AccountLeaseState = 'standby' | 'active' | 'draining';

/** The signals one tenure's work services run under (as compose.ts DaemonOptions: stop drains, abort cuts). */
export interface TenureSignals {
  /** Drain: finish the current batch, commit, stop (daemon stop, or the lease handed back). */
  stopSignal: AbortSignal;
  /** At once: the lease is lost (its commits would fail anyway) or the daemon's grace period ran out. */
  abortSignal: AbortSignal;
  /**
   * Throws (an AbortError caused by LeaseLostError, after aborting the tenure) once the lease may
   * have expired by this replica's own clock: its last successful claim or renewal started more
   * than the TTL ago. Synchronous, so it can run right before a request that changes data at the
   * API is written (ApiClient.withSendGuard): a replica that was paused or cut off from the
   * database past its deadline does not send a create the new holder has already reconciled and
   * sent again. The timer that aborts the tenure at the same moment may fire later than I/O after
   * a pause (SIGSTOP, a frozen VM); this check does not wait for it.
   */
  assertHeld: () => void;
  /**
   * Whether the tenure still holds the lease, without side effects: false once it was cut (lost,
   * a work service failed), passed its deadline on this replica's clock, or ended. While true no
   * later epoch of the lease can exist (the drop writer lock relies on it: tenure-writer-fence.ts).
   */
  isHeld: () => boolean;
}

export interface AccountLeaseServiceOptions {
  account: string;
  /** This replica's id: the lease holder. */
  holder: string;
  /** What the holder is, recorded on the lease row for `status` and waiting commands; default `run`. */
  command?: string;
  leases: LeaseStore;
  ttlMs: number;
  /** How often a standby replica tries to claim. */
  claimIntervalMs: number;
  /** How often the lease is renewed while held; default a third of the TTL. */
  renewIntervalMs?: number;
  /**
   * The account's API work (pollers, backfill chunks, outbound dispatch, webhook processing) for
   * one tenure, writing through stores fenced by `fence` (createStores(db, { fence })). Called anew
   * on every claim: a tenure's services are never restarted under another epoch.
   */
  work: (fence: Fence, signals: TenureSignals) => DaemonService[];
  /**
   * Fair share (ReplicaPresence.claimWithinShare): runs `claim` only while this replica is below
   * its share, one claim at a time per replica; undefined when over it. Default: always claim.
   */
  withinShare?: <T>(claim: () => Promise<T | undefined>) => Promise<T | undefined>;
  /**
   * Asked after each renewal: true when this replica holds more than its share (a replica joined)
   * and this lease should be handed over — drained, released, and not claimed again for a few
   * claim intervals, so a replica below its share takes it. Default: never.
   */
  shouldHandOver?: () => Promise<boolean>;
  /** The daemon's signals (compose.ts DaemonOptions). */
  stopSignal: AbortSignal;
  abortSignal: AbortSignal;
  logger: Logger;
}

export interface AccountLeaseService extends DaemonService {
  state(): AccountLeaseState;
  /** The epoch held (active or draining); undefined in standby. */
  epoch(): number | undefined;
}

type TenureEnd = 'lost' | 'stopped' | 'handed over' | 'requested';

/**
 * Runs one account's work on one replica at a time (issue 11; design §2b). In standby it tries to
 * claim the account's lease every `claimIntervalMs`; holding it, it runs the work services of that
 * tenure and renews the lease every `renewIntervalMs`. The lease is lost when a renewal finds it
 * gone, when a work service fails with LeaseLostError (a fenced commit refused), or when renewals
 * keep failing for a whole TTL (the database unreachable: by then another replica may hold it):
 * the work is aborted at once and the service returns to standby. `stop()` drains the work, then
 * releases the lease so another replica takes over on its next claim, not after the expiry.
 *
 * A work service failing with any other error stops the work, releases the lease and fails this
 * service (the daemon then stops, as for any dead loop).
 *
 * A one-shot command (`sync`, `backfill`) that wants the account records a hand-over request on
 * the lease row; the renewal reads it, and the tenure is drained and released as for a stop. The
 * request keeps everybody but its requester from claiming, so this service claims the lease again
 * once the command released it (its next claim tick after that).
 */
export function accountLeaseService(options: AccountLeaseServiceOptions): AccountLeaseService {
  const { account, holder, leases, ttlMs, logger } = options;
  const renewIntervalMs = options.renewIntervalMs ?? Math.max(1, Math.floor(ttlMs / 3));
  const log = logger.child({ account, holder });
  const stopping = new AbortController();
  const onDaemonStop = () => stopping.abort(options.stopSignal.reason);
  let state: AccountLeaseState = 'standby';
  let current: Lease | undefined;
  let loop: Promise<void> | undefined;
  // start() returns once the first claim has been tried and, when it won, that tenure's services
  // are up: a lone process is fully running when it says so (the ready line), a standby says standby.
  let firstSettled!: () => void;
  const firstAttempt = new Promise<void>((resolve) => (firstSettled = resolve));

  /**
   * One claim attempt; `startedAt` (monotonic) is taken right before the claim statement goes
   * out, not before the fair-share turn and its queries: on a loaded replica those can take longer
   * than the TTL, and a tenure measured from before them ended the moment it began.
   */
  async function tryClaim(): Promise<{ lease: Lease; startedAt: number } | undefined> {
    const claim = async () => {
      const startedAt = performance.now();
      const [lease] = await leases.claim([account], { holder, ttlMs, max: 1, command: options.command ?? 'run' });
      return lease ? { lease, startedAt } : undefined;
    };
    return options.withinShare ? options.withinShare(claim) : claim();
  }

  /** Runs one tenure: work services up, renewals, until the lease is lost or a stop drained it. */
  async function hold(lease: Lease, claimStartedAt: number): Promise<TenureEnd> {
    const tenureStop = new AbortController();
    const tenureAbort = new AbortController();
    // The lease's deadline was set by the database clock after our claim or renewal started, so by
    // our monotonic clock it ends no sooner than that start + TTL; the margin covers clock rates.
    const validityMs = leaseValidityMs(ttlMs);
    let validUntil = claimStartedAt + validityMs;
    let expiredLocally = false;
    let expiryTimer: NodeJS.Timeout | undefined;
    // Settles when the tenure was cut by our clock: the loop below stops the work and steps down
    // at once, even while it waits for a renewal that does not answer (its services do not end
    // by themselves: an outbound poll retries an aborted poll, for one).
    let expiredNow!: () => void;
    const expired = new Promise<'expired'>((resolve) => (expiredNow = () => resolve('expired')));
    const expire = () => {
      if (!expiredLocally) {
        expiredLocally = true;
        expiredNow();
        log.warn({ epoch: lease.epoch }, `lease of account ${account} (epoch ${lease.epoch}) passed its deadline on this replica's clock without a renewal: its work is cut, nothing more is sent to the API`);
        cut(leaseExpiredAbort(lease));
      }
      return tenureAbort.signal.reason as Error;
    };
    const armExpiry = () => {
      clearTimeout(expiryTimer);
      expiryTimer = setTimeout(expire, Math.max(0, validUntil - performance.now()));
      expiryTimer.unref();
    };
    const assertHeld = () => {
      if (expiredLocally || performance.now() >= validUntil) throw expire();
    };
    // Set when the tenure is cut or over: its work no longer holds the lease.
    let over = false;
    const isHeld = () => !over && !expiredLocally && performance.now() < validUntil;
    const onDaemonAbort = () => tenureAbort.abort(options.abortSignal.reason);
    options.abortSignal.addEventListener('abort', onDaemonAbort, { once: true });
    if (options.abortSignal.aborted) onDaemonAbort();
    current = lease;
    state = 'active';
    log.info({ epoch: lease.epoch }, `lease of account ${account} claimed (epoch ${lease.epoch}): starting its work`);
    const cut = (reason: unknown) => {
      over = true;
      tenureAbort.abort(reason);
      tenureStop.abort(reason);
    };
    let runner: DaemonRunner | undefined;
    try {
      try {
        armExpiry();
        const services = options.work(lease, { stopSignal: tenureStop.signal, abortSignal: tenureAbort.signal, assertHeld, isHeld }).map((service) => cutOnLoss(service, cut));
        runner = await startDaemon({ services, logger: log, scope: `the work of account ${account}`, isExpectedFailure: leaseLost });
        firstSettled();
      } catch (error) {
        if (leaseLost(error)) return await lost(lease, error);
        await leases.release([lease]).catch((e: unknown) => log.warn({ err: e }, 'cannot release the lease'));
        throw error;
      }
      const failed = runner.promise.then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      let lastRenewed = Date.now();
      for (;;) {
        const woke = await Promise.race([sleep(renewIntervalMs, stopping.signal).then(() => 'renew' as const, () => 'stop' as const), failed, expired]);
        if (woke === 'expired' || expiredLocally) return await stepDown(lease, runner);
        if (woke === 'stop') return await drainAndRelease(lease, runner, failed, tenureStop, expired, 'stopped');
        if (woke !== 'renew') {
          // A work service died; startDaemon has stopped the others already.
          cut(woke?.error);
          await runner.stop();
          if (expiredLocally) {
            // Cut by our own clock: if the database renewed it after all, let the others claim it now.
            await leases.release([lease]).catch(() => 0);
            return await lost(lease, woke?.error);
          }
          if (woke === undefined || leaseLost(woke.error)) return await lost(lease, woke?.error);
          await leases.release([lease]).catch((e: unknown) => log.warn({ err: e }, 'cannot release the lease'));
          throw woke.error;
        }
        const startedAt = Date.now();
        const startedMono = performance.now();
        try {
          const renewing = leases.renew([lease], ttlMs);
          const renewed = await Promise.race([renewing, expired]);
          if (renewed === 'expired') {
            renewing.catch(() => undefined);
            return await stepDown(lease, runner);
          }
          if (renewed.length === 0) {
            cut(new Error(`lease of account ${account} lost`));
            return await lost(lease, undefined, runner, 'lease lost');
          }
          current = renewed[0];
          lastRenewed = startedAt;
          if (!expiredLocally) {
            validUntil = startedMono + validityMs;
            armExpiry();
          }
          const request = renewed[0]!.handOverRequest;
          if (request) {
            log.info({ epoch: lease.epoch, requestedBy: request.by }, `handing account ${account} over to ${describeRequester(request)} (it asked for the lease)`);
            return await drainAndRelease(lease, runner, failed, tenureStop, expired, 'requested');
          }
          if (await wantsHandOver()) return await drainAndRelease(lease, runner, failed, tenureStop, expired, 'handed over');
        } catch (error) {
          // The database did not answer. Our own clock only ever makes us give up sooner: after a
          // TTL without a renewal another replica may hold the lease, so the work stops (its
          // commits would be refused anyway).
          log.warn({ err: error, epoch: lease.epoch }, `cannot renew the lease of account ${account}`);
          if (expiredLocally || Date.now() - lastRenewed >= ttlMs) {
            cut(error);
            return await lost(lease, error, runner, 'lease not renewed');
          }
        }
      }
    } finally {
      over = true;
      clearTimeout(expiryTimer);
      options.abortSignal.removeEventListener('abort', onDaemonAbort);
      current = undefined;
      state = 'standby';
    }
  }

  /**
   * The tenure was cut by this replica's clock (TenureSignals.assertHeld): its services are
   * stopped (they were aborted already), the lease given back if the database still has it as
   * ours (a renewal that came late), and the service returns to standby.
   */
  async function stepDown(lease: Lease, runner: DaemonRunner): Promise<TenureEnd> {
    const end = await lost(lease, undefined, runner, 'lease expired on this replica\'s clock');
    await leases.release([lease]).catch(() => 0);
    return end;
  }

  /** Whether fair share asks for this lease now (a failing check keeps the lease: it is only a balance). */
  async function wantsHandOver(): Promise<boolean> {
    if (!options.shouldHandOver || stopping.signal.aborted) return false;
    return options.shouldHandOver().catch((error: unknown) => {
      log.warn({ err: error }, 'cannot check the fair share; keeping the lease');
      return false;
    });
  }

  /**
   * Drains the tenure (current batches finish and commit), then releases the lease at once so
   * another replica claims it on its next poll: on the daemon's stop, or when handing over.
   */
  async function drainAndRelease(
    lease: Lease,
    runner: DaemonRunner,
    failed: Promise<{ error: unknown } | undefined>,
    tenureStop: AbortController,
    expired: Promise<'expired'>,
    end: 'stopped' | 'handed over' | 'requested',
  ): Promise<TenureEnd> {
    state = 'draining';
    log.info({ epoch: lease.epoch }, `draining the work of account ${account}, ${DRAIN_REASONS[end]}`);
    tenureStop.abort(end === 'stopped' ? stopping.signal.reason : new Error('lease handed over'));
    const stopped = runner.stop(end === 'stopped' ? 'lease service stopping' : 'lease handed over');
    // The lease passing its deadline during the drain (a pause: the work was cut by the expiry
    // timer) is said at once, as outside a drain — not when the drain ends, which waits for a
    // token rotation in flight to store its pair (up to 30 s; cluster chaos: 18 s after a SIGCONT).
    let saidLost = false;
    if ((await Promise.race([stopped.then(() => 'stopped' as const), expired])) === 'expired') {
      saidLost = true;
      log.warn({ epoch: lease.epoch }, `lease of account ${account} lost (epoch ${lease.epoch}) while its work drained: stopping its work`);
    }
    await stopped;
    // A loop that died while draining: report it after handing the lease back.
    const outcome = await Promise.race([failed, Promise.resolve(undefined)]);
    const released = await leases.release([lease]).catch((e: unknown) => {
      log.warn({ err: e }, `cannot release the lease of account ${account}; it frees at its expiry`);
      return undefined;
    });
    if (released !== undefined && released > 0) log.info({ epoch: lease.epoch }, `lease of account ${account} released`);
    // Nothing to release: the lease expired or passed to another replica while the work drained
    // (a pause, a starved process). Its writes were fenced all along; the operator is told.
    else if (released === 0) log[saidLost ? 'info' : 'warn']({ epoch: lease.epoch }, `lease of account ${account} lost (epoch ${lease.epoch}) while its work drained; back to standby`);
    if (outcome && !leaseLost(outcome.error)) throw outcome.error;
    return end;
  }

  /**
   * Says the lease is lost the moment this replica knows it (its writes are fenced already), then,
   * given the runner, waits for the account's work to stop: an operator reading the log of a replica that was paused
   * learns it at once, not after the slowest in-flight request gave up.
   */
  async function lost(lease: Fence, cause: unknown, runner?: DaemonRunner, why?: string): Promise<TenureEnd> {
    const err = cause ? { err: cause } : {};
    if (!runner) {
      log.warn({ epoch: lease.epoch, ...err }, `lease of account ${account} lost (epoch ${lease.epoch}): its work stopped; back to standby`);
      return 'lost';
    }
    log.warn({ epoch: lease.epoch, ...err }, `lease of account ${account} lost (epoch ${lease.epoch}): stopping its work`);
    const started = performance.now();
    await runner.stop(why);
    const ms = Math.round(performance.now() - started);
    log[ms >= SLOW_STOP_MS ? 'warn' : 'info']({ epoch: lease.epoch, stopMs: ms }, `work of account ${account} stopped ${ms} ms after its lease was lost; back to standby`);
    return 'lost';
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      let claimed: { lease: Lease; startedAt: number } | undefined;
      try {
        claimed = await tryClaim();
      } catch (error) {
        log.warn({ err: error }, `cannot claim the lease of account ${account}; retrying`);
      }
      let pause = options.claimIntervalMs;
      if (claimed) {
        const end = await hold(claimed.lease, claimed.startedAt);
        if (end === 'stopped') return;
        // Lost: give the new holder a claim interval before trying again. Handed over: leave it to
        // the replicas below their share for a few intervals (claiming it back would undo the balance).
        if (end === 'handed over') pause = options.claimIntervalMs * HAND_OVER_PAUSE_INTERVALS;
      }
      firstSettled();
      await sleep(pause, stopping.signal).catch(() => undefined);
    }
  }

  return {
    name: `account-lease:${account}`,
    state: () => state,
    epoch: () => current?.epoch,
    async start() {
      options.stopSignal.addEventListener('abort', onDaemonStop, { once: true });
      if (options.stopSignal.aborted) onDaemonStop();
      loop = run();
      loop.then(firstSettled, firstSettled);
      await firstAttempt;
      return { loops: loop };
    },
    async stop() {
      stopping.abort(new Error('stop requested'));
      options.stopSignal.removeEventListener('abort', onDaemonStop);
      // The loop's failure is reported through `loops`; stop only waits for the drain.
      await loop?.catch(() => undefined);
    },
  };
}

const DRAIN_REASONS = {
  stopped: 'then releasing its lease',
  'handed over': 'then handing its lease over (this replica holds more than its share)',
  requested: 'then handing its lease over to the command that asked for it; claiming it back when that is done',
} as const;

function describeRequester(request: HandOverRequest): string {
  return describeHolder(request.by, request.command);
}

/** Claim intervals a replica leaves a lease it handed over to the others. */
const HAND_OVER_PAUSE_INTERVALS = 5;

/** A lost tenure's work taking longer than this to stop is a warning (something ignored its abort). */
const SLOW_STOP_MS = 5_000;

/**
 * How long after the start of a successful claim or renewal the lease surely still holds by this
 * process's monotonic clock: the database set its deadline (its clock + TTL) after that start; the
 * margin, a tenth of the TTL and at most 0.5 s, covers clock rates.
 */
export function leaseValidityMs(ttlMs: number): number {
  return ttlMs - Math.min(500, Math.floor(ttlMs / 10));
}

/** The abort reason of a tenure whose lease passed its deadline by this replica's clock (caused by LeaseLostError). */
export function leaseExpiredAbort(lease: Fence): Error {
  const error = new Error(`lease of account ${lease.account} (epoch ${lease.epoch}) not renewed within its TTL: it may be held by another replica now`, {
    cause: new LeaseLostError(lease),
  });
  error.name = 'AbortError';
  return error;
}

/** Whether `error` (or an error it wraps, e.g. startDaemon's DaemonFailedError) is a lost lease. */
function leaseLost(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (isLeaseLostError(e)) return true;
  }
  return false;
}

/**
 * A work service whose loop fails with a lost lease aborts the whole tenure before startDaemon
 * stops the other services: they are cut at once, not drained (their commits would be refused).
 */
function cutOnLoss(service: DaemonService, cut: (reason: unknown) => void): DaemonService {
  return {
    name: service.name,
    async start() {
      const { loops } = await service.start();
      return {
        loops: loops.catch((error: unknown) => {
          if (leaseLost(error)) cut(error);
          throw error;
        }),
      };
    },
    stop: () => service.stop(),
  };
}
