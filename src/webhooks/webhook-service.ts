import type { DaemonService, DaemonServiceFactory } from '../app/daemon.js';
import { serversFor } from '../ops/server-pool.js';
import { isAbortError } from '../util/abort.js';
import { UsageError } from '../util/errors.js';
import { catchUp } from './catch-up.js';
import { WebhookInboxStore } from '../state/stores/webhook-inbox-store.js';
import { WebhookProcessor } from './processor.js';
import { createReceiver } from './receiver.js';
import { Wakeup } from './wakeup.js';

const PRUNE_EVERY_MS = 60 * 60_000;
const KEEP_DONE_MS = 7 * 86_400_000;

/**
 * The webhook part of `run`: the receiver route (`webhooks.listen` + `webhooks.path`), the
 * processor loop that works off the inbox, and the catch-up from the event log — at start (after
 * downtime) and every `webhooks.catchUpInterval` (deliveries the sender gave up on). Stopping:
 * the receiver answers 503 (the sender retries later), the processor finishes its batch.
 */
export const webhookService: DaemonServiceFactory = (daemon) => {
  const { app } = daemon;
  const config = app.config.webhooks;
  if (!config.enabled) return undefined;
  if (!config.secret) throw new UsageError('webhooks.secret: is required when webhooks are enabled');
  const secret = config.secret;
  const logger = app.logger.child({ component: 'webhooks' });
  const servers = serversFor(app);
  const inbox = new WebhookInboxStore(app.db);
  const processor = new WebhookProcessor(app, inbox, { batchSize: config.batchSize, maxAttempts: config.maxAttempts });
  const loops = new AbortController();
  const catchUpWake = new Wakeup();
  let accepting = false;
  let running: Promise<unknown> | undefined;

  const runCatchUp = async () => {
    try {
      const result = await catchUp(
        {
          client: app.client,
          inbox,
          checkpoints: app.checkpoints,
          metrics: app.metrics,
          logger,
          overlapMs: config.catchUpOverlap,
          maxAgeMs: config.catchUpMaxAge,
          dedupeWindowMs: config.dedupeWindow,
        },
        loops.signal,
      );
      if (result.stored > 0) processor.wakeup.notify();
      logger.info(result, result.from ? 'webhook catch-up read the event log' : 'webhook catch-up: first start, position set (polling covers the past)');
    } catch (error) {
      if (isAbortError(error) && loops.signal.aborted) return;
      logger.warn({ err: error }, 'webhook catch-up failed; retried on the next interval (polling still covers the gap)');
    }
  };

  const catchUpLoop = async () => {
    let lastPrune = 0;
    await runCatchUp();
    while (!loops.signal.aborted) {
      if (config.catchUpInterval <= 0) return;
      await catchUpWake.wait(config.catchUpInterval, loops.signal);
      if (loops.signal.aborted) return;
      await runCatchUp();
      if (Date.now() - lastPrune > PRUNE_EVERY_MS) {
        lastPrune = Date.now();
        const pruned = await inbox.prune(new Date(Date.now() - Math.max(KEEP_DONE_MS, config.dedupeWindow * 2)).toISOString()).catch(() => 0);
        if (pruned > 0) logger.debug({ pruned }, 'pruned processed webhook events');
      }
    }
  };

  const service: DaemonService = {
    name: 'webhooks',
    async start() {
      servers.mount(
        config.listen,
        config.path,
        createReceiver({
          secret,
          maxBodyBytes: config.maxBodyBytes,
          dedupeWindowMs: config.dedupeWindow,
          inbox,
          metrics: app.metrics,
          logger,
          now: () => app.client.clock.now(),
          onStored: () => processor.wakeup.notify(),
          accepting: () => accepting && !daemon.stopSignal.aborted,
        }),
      );
      accepting = true;
      const address = await servers.listen(config.listen);
      logger.info({ listen: `${address.address}:${address.port}`, path: config.path }, 'webhook receiver listening');
      running = Promise.allSettled([processor.run(loops.signal, daemon.abortSignal), catchUpLoop()]);
    },
    async stop() {
      accepting = false;
      await servers.unmount(config.listen, config.path);
      loops.abort();
      await running;
    },
  };
  return service;
};
