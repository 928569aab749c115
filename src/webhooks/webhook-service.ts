import type { ApiClient } from '../api/api-client.js';
import type { WebhooksConfig } from '../config/types.js';
import type { HttpServers } from '../ops/http-servers.js';
import type { OpsMetrics } from '../ops/metrics.js';
import type { CheckpointStore } from '../state/stores/checkpoint-store.js';
import type { WebhookInboxStore } from '../state/stores/webhook-inbox-store.js';
import { isLeaseLostError } from '../state/leases/index.js';
import { isAbortError } from '../util/abort.js';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import { UsageError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { catchUp } from './catch-up.js';
import type { WebhookProcessor } from './processor.js';
import { noteServerClock, ReceiptClock } from './receipt-clock.js';
import { createReceiver } from './receiver.js';
import { Wakeup } from './wakeup.js';

export interface WebhookReceiverDeps {
  config: WebhooksConfig;
  inbox: WebhookInboxStore;
  servers: HttpServers;
  metrics: OpsMetrics;
  logger: Logger;
  /** Server time for a receipt (a `ReceiptClock`: the client's clock, or the holder's note of it). */
  now: () => Date | Promise<Date>;
  /** An event was committed (received at that server time): wake whatever processes the inbox in this process (if anything does). */
  onStored: (receivedAt: Date) => void;
  stopSignal: AbortSignal;
}

export interface WebhookProcessingDeps {
  config: WebhooksConfig;
  client: ApiClient;
  inbox: WebhookInboxStore;
  checkpoints: CheckpointStore;
  processor: WebhookProcessor;
  metrics: OpsMetrics;
  logger: Logger;
  stopSignal: AbortSignal;
  abortSignal: AbortSignal;
}

export type WebhookServiceDeps = Omit<WebhookReceiverDeps, 'now' | 'onStored'> & WebhookProcessingDeps;

const PRUNE_EVERY_MS = 60 * 60_000;
const KEEP_DONE_MS = 7 * 86_400_000;

/**
 * The receiver route (`webhooks.listen` + `webhooks.path`): verifies the signature, commits the
 * event to the inbox and only then answers 200 (503 when the state store cannot take it, and while
 * stopping, so the sender retries). It runs on every replica, whichever holds the account's lease:
 * a load balancer may send a delivery to any of them, and the inbox is shared (PostgreSQL state).
 */
export function webhookReceiverService(deps: WebhookReceiverDeps): DaemonServiceLike {
  const { config, logger, servers, inbox, metrics } = deps;
  if (!config.secret) throw new UsageError('webhooks.secret: is required when webhooks are enabled');
  const secret = config.secret;
  let accepting = false;
  return {
    name: 'webhook-receiver',
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
          now: deps.now,
          onStored: deps.onStored,
          accepting: () => accepting && !deps.stopSignal.aborted,
        }),
      );
      accepting = true;
      const address = await servers.listen(config.listen);
      logger.info({ listen: `${address.address}:${address.port}`, path: config.path }, 'webhook receiver listening');
      // Nothing loops here: the HTTP server answers on its own.
      return { loops: new Promise<void>(() => undefined) };
    },
    async stop() {
      accepting = false;
      await servers.unmount(config.listen, config.path);
    },
  };
}

/**
 * The processing side of webhooks: the processor loop that works off the inbox, and the catch-up
 * from the event log — at start (after downtime) and every `webhooks.catchUpInterval` (deliveries
 * the sender gave up on). Runs where the account's lease is held; stopping finishes the batch.
 */
export function webhookProcessingService(deps: WebhookProcessingDeps): DaemonServiceLike {
  const { config, logger, inbox, processor, client, metrics } = deps;
  const loops = new AbortController();
  const catchUpWake = new Wakeup();
  let running: Promise<void> | undefined;
  /** The offset of the API's clock last noted for other replicas' receivers (receipt-clock.ts). */
  let notedOffset: number | undefined;

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
      if (isLeaseLostError(error)) throw error;
      logger.warn({ err: error }, 'webhook catch-up failed; retried on the next interval (polling still covers the gap)');
    }
    // The catch-up measured the API's clock: noted for the receivers of replicas that have not.
    try {
      notedOffset = await noteServerClock(client.clock, deps.checkpoints, notedOffset);
    } catch (error) {
      if (isLeaseLostError(error)) throw error;
      logger.warn({ err: error }, "could not note the API's clock offset for other replicas' webhook receipts; retried after the next catch-up");
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
  // loop never dies on its own but for a lost lease; the processor loop can (see WebhookProcessor.run).
  return {
    name: 'webhooks',
    async start() {
      const both = Promise.all([processor.run(loops.signal, deps.abortSignal), catchUpLoop()]).then(() => undefined);
      // A dead processor is a dead service: the catch-up loop stops with it.
      both.catch(() => loops.abort());
      running = both;
      return { loops: both };
    },
    async stop() {
      loops.abort();
      await running?.catch(() => undefined);
    },
  };
}

/** Receiver and processing in one service (one process that always does both). */
export function webhookService(deps: WebhookServiceDeps): DaemonServiceLike {
  const processing = webhookProcessingService(deps);
  const receipts = new ReceiptClock(deps.client.clock, deps.checkpoints);
  const receiver = webhookReceiverService({ ...deps, now: () => receipts.now(), onStored: () => deps.processor.stored() });
  return {
    name: 'webhooks',
    async start() {
      const received = await receiver.start();
      const processed = await processing.start();
      return { loops: Promise.race([received.loops, processed.loops]) };
    },
    async stop() {
      await receiver.stop();
      await processing.stop();
    },
  };
}
