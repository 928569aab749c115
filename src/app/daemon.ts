import { EventEmitter } from 'node:events';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

import type { DaemonServiceLike } from '../util/daemon-service.js';

/** A long-running part of the daemon (see `DaemonServiceLike`). */
export type DaemonService = DaemonServiceLike;

export interface DaemonEvents {
  'service:started': [name: string];
  /** A service's loop died: the daemon is stopping because of it. */
  'service:failed': [name: string, error: unknown];
  stopping: [reason: string];
  stopped: [error: unknown];
}

/**
 * The runner handle of `freight-sync run` (graphile-worker style). `promise` resolves once a
 * requested stop has drained everything, and rejects — after stopping the other services in
 * reverse order — when any service loop died. Tests and the CLI wait on it; nothing polls.
 */
export interface DaemonRunner {
  readonly promise: Promise<void>;
  /** Drains and stops every service in reverse start order; resolves when done (never rejects). */
  stop(reason?: string): Promise<void>;
  readonly events: EventEmitter<DaemonEvents>;
}

export class DaemonFailedError extends Error {
  readonly service: string;
  constructor(service: string, cause: unknown) {
    super(`service ${service} failed: ${describeError(cause)}`, { cause });
    this.name = 'DaemonFailedError';
    this.service = service;
  }
}

/**
 * Starts the services in order (a failing start stops those already started, in reverse, and
 * rethrows). Returns once all are up.
 */
export async function startDaemon(options: {
  services: readonly DaemonService[];
  logger: Logger;
  /** What a dying service stops, in its log line: "the daemon", or e.g. "the work of account a03". */
  scope?: string;
  /** A failure that is part of normal operation (a lost lease): logged as a warning, not an error. */
  isExpectedFailure?: (error: unknown) => boolean;
}): Promise<DaemonRunner> {
  const { logger } = options;
  const scope = options.scope ?? 'the daemon';
  const events = new EventEmitter<DaemonEvents>();
  const started: DaemonService[] = [];
  let failure: DaemonFailedError | undefined;
  let stopping: Promise<void> | undefined;
  let settle!: { resolve: () => void; reject: (error: unknown) => void };
  const promise = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // The CLI and tests attach their own handlers; this one only keeps an early failure from
  // being reported as unhandled before they do.
  promise.catch(() => undefined);

  const stopAll = (reason: string): Promise<void> =>
    (stopping ??= (async () => {
      events.emit('stopping', reason);
      for (const service of [...started].reverse()) {
        try {
          await service.stop();
        } catch (error) {
          logger.warn({ err: error, service: service.name }, 'service failed to stop cleanly');
        }
      }
      events.emit('stopped', failure);
      if (failure) settle.reject(failure);
      else settle.resolve();
    })());

  const watch = (service: DaemonService, loops: Promise<void>) => {
    loops.then(
      () => undefined,
      (error: unknown) => {
        // A service that runs services of its own (the account lease's tenure) reports which of
        // them died: that one is named, not the container.
        const named = error instanceof DaemonFailedError ? error : new DaemonFailedError(service.name, error);
        failure ??= named;
        // (Its own runner logged it already.)
        if (named === error) logger.info({ service: named.service }, `stopping ${scope}`);
        else if (options.isExpectedFailure?.(error)) logger.warn({ err: error, service: service.name }, `service ${service.name} stopped: ${describeError(error)}; stopping ${scope}`);
        else logger.error({ err: error, service: service.name }, `service ${service.name} failed: stopping ${scope}`);
        events.emit('service:failed', named.service, named.cause);
        void stopAll(`service ${service.name} failed`);
      },
    );
  };

  for (const service of options.services) {
    // A service started earlier died while the previous one was starting: start nothing more.
    if (stopping) {
      await stopping;
      throw failure ?? new Error('the daemon stopped while starting');
    }
    let run: { loops: Promise<void> };
    try {
      run = await service.start();
    } catch (error) {
      failure = new DaemonFailedError(service.name, error);
      await stopAll(`service ${service.name} failed to start`);
      throw failure;
    }
    if (stopping) {
      // The stop began while this service was starting (it is not in the list being stopped).
      try {
        await service.stop();
      } catch (error) {
        logger.warn({ err: error, service: service.name }, 'service failed to stop cleanly');
      }
      await stopping;
      throw failure ?? new Error('the daemon stopped while starting');
    }
    started.push(service);
    watch(service, run.loops);
    events.emit('service:started', service.name);
    logger.info({ service: service.name }, 'service started');
  }
  return {
    promise,
    events,
    stop: (reason = 'stop requested') => stopAll(reason),
  };
}
