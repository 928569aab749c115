import { isAbortError, sleep } from '../util/abort.js';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import { runSupervisedLoop } from '../util/supervised-loop.js';
import type { Logger } from '../util/logger.js';
import type { OutboundEngine } from './outbound-engine.js';
import { OutboxBusyError } from './errors.js';

export interface OutboundServiceDeps {
  engine: OutboundEngine;
  /** `outbound.pollInterval` (ms): how often the sources are asked for new commands. */
  pollIntervalMs: number;
  logger: Logger;
  /** First SIGTERM: take no new commands, let in-flight calls finish. */
  stopSignal: AbortSignal;
  /** Second SIGTERM: abort in-flight calls (their rows are reconciled later). */
  abortSignal: AbortSignal;
  /** Failures in a row before a loop gives up and stops the daemon (default 8). */
  maxConsecutiveFailures?: number;
  failurePauseMs?: { base: number; max: number };
  /**
   * Wait while another process holds the dispatcher lease instead of failing (the daemon under
   * the account lease: after a failover the dead replica's dispatcher lease frees at its expiry).
   */
  waitForDispatcherLease?: boolean;
}

const LEASE_POLL_MS = 1_000;

/**
 * The dispatcher inside `freight-sync run`: polls the sources every `outbound.pollInterval`,
 * dispatches continuously, and on stop finishes the in-flight calls (their outcome persisted)
 * before returning. Both loops survive errors (logged, paused); one that keeps failing ends the
 * service's `loops` with the error, and the runner stops the daemon — intake never goes on
 * accepting commands that nobody dispatches.
 */
export function outboundService(deps: OutboundServiceDeps): DaemonServiceLike {
  const { engine, logger } = deps;
  const stop = new AbortController();
  let loops: Promise<void> | undefined;
  let held: () => boolean = () => false;

  /** Takes the dispatcher lease; while another process holds it, waits when asked to (else fails). */
  const acquireLease = async (signal: AbortSignal) => {
    let announced = false;
    for (;;) {
      try {
        await engine.lease.acquire();
        return;
      } catch (error) {
        if (!(error instanceof OutboxBusyError) || !deps.waitForDispatcherLease) throw error;
        if (!announced) logger.warn({ err: error }, 'waiting for the outbox dispatcher lease (it frees when its holder stops, or at its expiry)');
        announced = true;
      }
      try {
        await sleep(LEASE_POLL_MS, signal);
      } catch (error) {
        if (isAbortError(error)) throw error;
      }
    }
  };

  const pollLoop = () =>
    runSupervisedLoop(
      {
        name: 'outbound poll',
        logger,
        // Ends at the stop, and at once when the tenure is cut (a lost lease): a poll aborted by
        // the cut is not a failure to retry (cluster chaos logged one every 1, 2, 4, 8 s after it).
        signal: AbortSignal.any([stop.signal, deps.abortSignal]),
        maxConsecutiveFailures: deps.maxConsecutiveFailures,
        baseDelayMs: deps.failurePauseMs?.base,
        maxDelayMs: deps.failurePauseMs?.max,
      },
      async (signal) => {
        const result = await engine.poll(deps.abortSignal);
        // A failing source is reported inside poll (the others still ran); it is not a dead loop.
        if (result.sourceErrors.length > 0) logger.debug({ sourceErrors: result.sourceErrors }, 'some outbound sources failed this poll');
        await sleep(deps.pollIntervalMs, signal).catch(() => undefined);
      },
    );

  return {
    name: 'outbound',
    async start() {
      const stopSignal = AbortSignal.any([stop.signal, deps.stopSignal]);
      let acquired = false;
      const run = async () => {
        if (!acquired) {
          try {
            await acquireLease(stopSignal);
          } catch (error) {
            // Stopped while waiting for the lease: nothing was dispatched, nothing to drain.
            if (isAbortError(error) && stopSignal.aborted) return;
            throw error;
          }
          acquired = true;
        }
        await engine.dispatcher.recover();
        const dispatch = engine.dispatcher.drain({ stopSignal, abortSignal: deps.abortSignal });
        // Either loop dying ends the other: the service is down as a whole.
        const both = Promise.all([pollLoop(), dispatch]).then(() => undefined);
        both.catch(() => stop.abort());
        await both;
      };
      if (!deps.waitForDispatcherLease) {
        await engine.lease.acquire();
        acquired = true;
      }
      held = () => acquired;
      loops = run();
      return { loops };
    },
    async stop() {
      stop.abort();
      await loops?.catch(() => undefined);
      await engine.writeBack.sweep().catch((error: unknown) => logger.warn({ err: error }, 'final write-back sweep failed; the next start retries it'));
      if (held()) await engine.lease.release();
    },
  };
}
