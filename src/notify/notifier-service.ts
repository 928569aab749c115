import { sleep } from '../util/abort.js';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import type { Logger } from '../util/logger.js';
import type { Notifier } from './notifier.js';

/**
 * The notifier as a service of `run`: evaluates every `intervalMs` until the first SIGTERM, then
 * sends what the rate limits held back and stops. An evaluation that fails (a locked state
 * database) is logged and tried at the next interval: notifications never stop the daemon.
 */
export function notifierService(deps: { notifier: Notifier; intervalMs: number; logger: Logger; stopSignal: AbortSignal; abortSignal: AbortSignal }): DaemonServiceLike {
  const { notifier, intervalMs, logger, stopSignal, abortSignal } = deps;
  let loop: Promise<void> | undefined;
  // The daemon may stop without a SIGTERM (another service died): `stop` ends the loop too.
  const stopped = new AbortController();
  const until = AbortSignal.any([stopSignal, stopped.signal]);
  return {
    name: 'notifications',
    async start() {
      loop = (async () => {
        while (!until.aborted) {
          try {
            await notifier.evaluate(abortSignal);
          } catch (error) {
            logger.error({ err: error }, 'evaluating the notification conditions failed; trying again at the next interval');
          }
          await sleep(intervalMs, until).catch(() => undefined);
        }
        await notifier.drain(abortSignal);
      })();
      return { loops: loop };
    },
    async stop() {
      stopped.abort();
      await loop;
    },
  };
}
