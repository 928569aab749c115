import type { DaemonService, DaemonServiceFactory } from '../app/daemon.js';
import { sleep } from '../util/abort.js';
import { createOutboundEngine } from './outbound-engine.js';

/**
 * The dispatcher inside `freight-sync run`: polls the sources every `outbound.pollInterval`,
 * dispatches continuously, and on stop finishes the in-flight calls (their outcome persisted)
 * before returning. Absent when `outbound.enabled` is false.
 */
export const outboundService: DaemonServiceFactory = (daemon) => {
  const { app } = daemon;
  if (!app.config.outbound.enabled) return undefined;
  const logger = app.logger.child({ component: 'outbound' });
  const engine = createOutboundEngine(app, { abortSignal: daemon.abortSignal, logger });
  const stop = new AbortController();
  let loops: Promise<unknown> | undefined;

  const pollLoop = async () => {
    while (!stop.signal.aborted) {
      try {
        await engine.poll(daemon.abortSignal);
      } catch (error) {
        if (stop.signal.aborted || daemon.abortSignal.aborted) return;
        logger.error({ err: error }, 'outbound poll failed; trying again at the next interval');
      }
      await sleep(app.config.outbound.pollInterval, stop.signal).catch(() => undefined);
    }
  };

  const service: DaemonService = {
    name: 'outbound',
    async start() {
      await engine.lease.acquire();
      await engine.dispatcher.recover();
      const stopSignal = AbortSignal.any([stop.signal, daemon.stopSignal]);
      loops = Promise.allSettled([pollLoop(), engine.dispatcher.drain({ stopSignal, abortSignal: daemon.abortSignal })]);
    },
    async stop() {
      stop.abort();
      await loops;
      await engine.writeBack.sweep().catch(() => undefined);
      await engine.lease.release();
    },
  };
  return service;
};
