import type { ApiClient } from '../api/api-client.js';
import type { WebhooksConfig } from '../config/types.js';
import type { HttpServers } from '../ops/http-servers.js';
import type { OpsMetrics } from '../ops/metrics.js';
import type { CheckpointStore } from '../state/stores/checkpoint-store.js';
import type { WebhookInboxStore } from '../state/stores/webhook-inbox-store.js';
import { isAbortError } from '../util/abort.js';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import { UsageError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { catchUp } from './catch-up.js';
import type { WebhookProcessor } from './processor.js';
import { createReceiver } from './receiver.js';
import { Wakeup } from './wakeup.js';

export interface WebhookServiceDeps {
  config: WebhooksConfig;
  client: ApiClient;
  inbox: WebhookInboxStore;
  checkpoints: CheckpointStore;
  processor: WebhookProcessor;
  servers: HttpServers;
  metrics: OpsMetrics;
  logger: Logger;
  stopSignal: AbortSignal;
  abortSignal: AbortSignal;
}

const PRUNE_EVERY_MS = 60 * 60_000;
const KEEP_DONE_MS = 7 * 86_400_000;

/**
 * The webhook part of `run`: the receiver route (`webhooks.listen` + `webhooks.path`), the
 * processor loop that works off the inbox, and the catch-up from the event log — at start (after
 * downtime) and every `webhooks.catchUpInterval` (deliveries the sender gave up on). Stopping:
 * the receiver answers 503 (the sender retries later), the processor finishes its batch.
 */
export function webhookService(deps: WebhookServiceDeps): DaemonServiceLike {
  const { config, logger, servers, inbox, processor, client, metrics } = deps;
  if (!config.secret) throw new UsageError('webhooks.secret: is required when webhooks are enabled');
  const secret = config.secret;
  const loops = new AbortController();
  const catchUpWake = new Wakeup();
  let accepting = false;
  let running: Promise<void> | undefined;

  const runCatchUp = async () => {
    try {
      const result = await catchUp(
        {
          client,
          inbox,
          checkpoints: deps.checkpoints,
          metrics,
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

  // Catch-up failures are only logged (the API may be down; polling covers the gap), so this
  // loop never dies on its own; the processor loop can (see WebhookProcessor.run).
  const service: DaemonServiceLike = {
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
          metrics,
          logger,
          now: () => client.clock.now(),
          onStored: () => processor.wakeup.notify(),
          accepting: () => accepting && !deps.stopSignal.aborted,
        }),
      );
      accepting = true;
      const address = await servers.listen(config.listen);
      logger.info({ listen: `${address.address}:${address.port}`, path: config.path }, 'webhook receiver listening');
      const both = Promise.all([processor.run(loops.signal, deps.abortSignal), catchUpLoop()]).then(() => undefined);
      // A dead processor is a dead service: the catch-up loop stops with it.
      both.catch(() => loops.abort());
      running = both;
      return { loops: both };
    },
    async stop() {
      accepting = false;
      await servers.unmount(config.listen, config.path);
      loops.abort();
      await running?.catch(() => undefined);
    },
  };
  return service;
}
