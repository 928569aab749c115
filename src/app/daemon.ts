import type { Logger } from '../util/logger.js';
import type { AppContext } from './app-context.js';
import { StreamScheduler } from './stream-scheduler.js';

/**
 * A long-running part of the daemon besides the stream scheduler (webhook receiver, outbound
 * dispatcher, ops HTTP server). `start` returns once it is up; `stop` drains and resolves.
 */
export interface DaemonService {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export type DaemonServiceFactory = (daemon: DaemonHandle) => DaemonService | undefined | Promise<DaemonService | undefined>;

export interface DaemonHandle {
  readonly app: AppContext;
  readonly scheduler: StreamScheduler;
  readonly logger: Logger;
  readonly stopSignal: AbortSignal;
  readonly abortSignal: AbortSignal;
}

/**
 * `freight-sync run`: the scheduler plus every registered service. Services start in order and
 * stop in reverse order; the scheduler stops first so no new batch starts while draining.
 */
export async function runDaemon(
  app: AppContext,
  options: { stopSignal: AbortSignal; abortSignal: AbortSignal; runOnStart: boolean; services: readonly DaemonServiceFactory[] },
): Promise<void> {
  const scheduler = new StreamScheduler(app, { stopSignal: options.stopSignal, abortSignal: options.abortSignal, runOnStart: options.runOnStart });
  const handle: DaemonHandle = { app, scheduler, logger: app.logger, stopSignal: options.stopSignal, abortSignal: options.abortSignal };
  const started: DaemonService[] = [];
  try {
    for (const factory of options.services) {
      const service = await factory(handle);
      if (!service) continue;
      await service.start();
      started.push(service);
      app.logger.info({ service: service.name }, 'service started');
    }
    scheduler.start();
    app.logger.info({ streams: app.streams.map((s) => (s.definition.pushOnly ? `${s.definition.name} (webhook push)` : `${s.definition.name} (${s.settings.schedule})`)) }, 'daemon running');
    await new Promise<void>((resolve) => {
      if (options.stopSignal.aborted) resolve();
      else options.stopSignal.addEventListener('abort', () => resolve(), { once: true });
    });
    app.logger.info('stopping: finishing current batches');
  } finally {
    await scheduler.stop();
    for (const service of started.reverse()) {
      try {
        await service.stop();
      } catch (error) {
        app.logger.warn({ err: error, service: service.name }, 'service failed to stop cleanly');
      }
    }
  }
}
