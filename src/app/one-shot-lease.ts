import { describeHolder, LeaseBusyError, LeaseLostError, newHolderId, type Lease, type LeaseRow } from '../state/leases/index.js';
import { sleep } from '../util/abort.js';
import { formatIsoDuration } from '../util/duration.js';
import { FreightSyncError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { performance } from 'node:perf_hooks';
import type { AppContext } from './app-context.js';
import { leaseExpiredAbort, leaseValidityMs } from './account-lease-service.js';
import { fencedApp } from './compose.js';

export interface OneShotLeaseOptions {
  /** The command (`sync`, `backfill`): recorded on the lease row, named in the holder's and the waiter's logs. */
  command: string;
  /** How long to wait for the holder to hand the lease over before refusing (`--lease-wait`). */
  waitMs: number;
  /** Stop waiting (first SIGTERM); the work itself gets the command's own stop signal. */
  stopSignal: AbortSignal;
  /** Abort the work (second SIGTERM); it is also aborted when the lease is lost. */
  abortSignal: AbortSignal;
  logger: Logger;
}

/** A stop request arrived while the command waited for the lease: nothing was done. */
export class LeaseWaitStoppedError extends FreightSyncError {
  constructor(account: string) {
    super('LEASE_WAIT_STOPPED', `stopped while waiting for the lease of account ${account}; nothing was done`);
  }
}

/**
 * Runs a one-shot command's work (`sync`, `backfill`) under the account's lease, as the daemon
 * runs a tenure (issue 11 item 6): the lease claimed first — asking its holder to hand it over
 * and waiting up to `waitMs` when another process holds it —, every state write fenced by it
 * (`fencedApp`), renewed every third of the TTL by the database clock while the work runs, and
 * released at the end, also after an error or a stop. `work` gets the fenced app and a signal
 * that aborts when the lease is lost (its commits would be refused anyway) or on `abortSignal`.
 *
 * A one-shot holder does not honour hand-over requests: it finishes, then releases.
 */
export async function withAccountLease<T>(app: AppContext, options: OneShotLeaseOptions, work: (leased: AppContext, signal: AbortSignal) => Promise<T>): Promise<T> {
  const holder = newHolderId();
  const log = options.logger.child({ component: 'lease', holder });
  const lease = await waitForLease(app, holder, options, log);
  const ttlMs = app.config.cluster.leaseTtl;
  const lost = new AbortController();
  const onAbort = () => lost.abort(options.abortSignal.reason);
  options.abortSignal.addEventListener('abort', onAbort, { once: true });
  if (options.abortSignal.aborted) onAbort();
  const done = new AbortController();
  // API writes are fenced by this process's clock too (as the daemon's tenures, TenureSignals.assertHeld);
  // a renewal right away gives the validity a start measured before the database set the deadline.
  const validity = { until: 0 };
  const assertHeld = () => {
    if (performance.now() < validity.until && !lost.signal.aborted) return;
    if (!lost.signal.aborted) lost.abort(leaseExpiredAbort(lease));
    throw lost.signal.reason as Error;
  };
  let renewals: Promise<Lease> | undefined;
  // The connectors' writer locks record the lease while the work holds it (tenure-writer-fence.ts).
  let finished = false;
  app.account.writerFence.begin(lease, () => !finished && !lost.signal.aborted && performance.now() < validity.until);
  try {
    const renewedAt = performance.now();
    const [renewedNow] = await app.account.leases.renew([lease], ttlMs);
    if (!renewedNow) throw new LeaseLostError(lease);
    validity.until = renewedAt + leaseValidityMs(ttlMs);
    renewals = keepRenewed(app, renewedNow, ttlMs, done.signal, lost, log, validity);
    return await work(fencedApp(app, lease, undefined, assertHeld), lost.signal);
  } finally {
    finished = true;
    done.abort();
    options.abortSignal.removeEventListener('abort', onAbort);
    const last = renewals ? await renewals : lease;
    const released = await app.account.leases.release([last]).catch((error: unknown) => {
      log.warn({ err: error }, `cannot release the lease of account ${lease.account}; it frees at its expiry`);
      return 0;
    });
    if (released > 0) log.debug({ epoch: lease.epoch }, `lease of account ${lease.account} released`);
  }
}

/**
 * Claims the lease; while another process holds it (or asked first), records a hand-over request
 * (re-asserted on every try, so it lives as long as we wait and no longer) and tries again.
 */
async function waitForLease(app: AppContext, holder: string, options: OneShotLeaseOptions, log: Logger): Promise<Lease> {
  const { leases, leaseKey: account } = app.account;
  const { leaseTtl: ttlMs, claimInterval } = app.config.cluster;
  // The holder sees the request at its next renewal (a third of the TTL), then drains: polling
  // faster than the claim interval only shortens our reaction once it released.
  const pollMs = Math.max(50, Math.min(claimInterval, 1_000));
  const startedAt = Date.now();
  let announced = '';
  let row: LeaseRow | undefined;
  for (;;) {
    const [lease] = await leases.claim([account], { holder, ttlMs, max: 1, command: options.command });
    if (lease) {
      if (announced) log.info({ epoch: lease.epoch }, `lease of account ${account} claimed (epoch ${lease.epoch}) after ${formatIsoDuration(Date.now() - startedAt)}`);
      return lease;
    }
    if (Date.now() >= startedAt + options.waitMs || options.stopSignal.aborted) {
      // Not waiting (any longer): no request, so the holder is not drained for nothing.
      row = await leases.row(account);
      break;
    }
    const outcome = await leases.request(account, { requester: holder, command: options.command, ttlMs });
    row = outcome.row;
    const waiting = waitingFor(account, row, outcome.recorded);
    if (waiting !== announced) {
      log.info({ account, holder: row.holder, epoch: row.epoch }, waiting);
      announced = waiting;
    }
    const left = startedAt + options.waitMs - Date.now();
    if (left <= 0) continue;
    const stopped = await sleep(Math.min(pollMs, left), options.stopSignal).then(() => false, () => true);
    if (stopped) break;
  }
  await leases.withdraw(account, holder).catch((error: unknown) => log.warn({ err: error }, 'cannot withdraw the hand-over request; it expires by itself'));
  if (options.stopSignal.aborted) throw new LeaseWaitStoppedError(account);
  throw new LeaseBusyError(account, row, formatIsoDuration(options.waitMs));
}

/** What a waiting command says, once per change of holder or queue. */
function waitingFor(account: string, row: LeaseRow, recorded: boolean): string {
  if (!recorded && row.request) return `waiting behind ${describeHolder(row.request.by, row.request.command)} (it asked first) for the lease of account ${account}`;
  if (!row.holder) return `waiting for the lease of account ${account}`;
  const who = describeHolder(row.holder, row.holderCommand);
  const oneShot = row.holderCommand !== null && row.holderCommand !== 'run';
  return oneShot
    ? `waiting for ${who} (epoch ${row.epoch}) to finish with account ${account}`
    : `waiting for ${who} (epoch ${row.epoch}) to hand over account ${account}`;
}

/**
 * Renews the lease every third of the TTL until `done`; returns the lease as last renewed. A renewal
 * that finds the lease gone, or none that succeeds for a whole TTL (the database unreachable:
 * another process may hold it by now), aborts `lost`: the work stops, its commits are refused.
 */
async function keepRenewed(app: AppContext, lease: Lease, ttlMs: number, done: AbortSignal, lost: AbortController, log: Logger, validity: { until: number }): Promise<Lease> {
  const intervalMs = Math.max(1, Math.floor(ttlMs / 3));
  let current = lease;
  let lastRenewed = Date.now();
  while (!lost.signal.aborted) {
    if (await sleep(intervalMs, done).then(() => false, () => true)) break;
    const startedAt = performance.now();
    try {
      const [renewed] = await app.account.leases.renew([current], ttlMs);
      if (!renewed) {
        log.error({ epoch: lease.epoch }, `lease of account ${lease.account} lost (epoch ${lease.epoch}): stopping the work`);
        lost.abort(new LeaseLostError(lease));
        break;
      }
      current = renewed;
      lastRenewed = Date.now();
      validity.until = startedAt + leaseValidityMs(ttlMs);
    } catch (error) {
      log.warn({ err: error, epoch: lease.epoch }, `cannot renew the lease of account ${lease.account}`);
      if (Date.now() - lastRenewed >= ttlMs) lost.abort(new LeaseLostError(lease));
    }
  }
  return current;
}
