import type { StreamName } from '../sync/stream-definition.js';
import type { FreightSyncConfig } from '../config/types.js';
import { WebhookProcessor, type ProcessorOptions, type WebhookStreamTarget } from '../webhooks/processor.js';
import type { AppContext } from './app-context.js';

/** How `run` supervises its loops (the config's `supervision` section, or a test's). */
export interface Supervision {
  maxConsecutiveFailures?: number;
  failurePauseMs?: { base: number; max: number };
}

/** The webhook inbox processor, delivering to the app's streams (`run`, and `rejected retry` of parked events). */
export function composeWebhookProcessor(app: AppContext, supervision: Supervision = supervisionOf(app.config), tuning: Pick<ProcessorOptions, 'claimAfterMs' | 'idlePollMs'> = {}): WebhookProcessor {
  const targets = new Map<StreamName, WebhookStreamTarget>(
    app.streams.map((s) => [s.definition.name, { definition: s.definition, sinks: app.sinksFor(s), options: s.options }]),
  );
  return new WebhookProcessor(
    {
      client: app.client,
      runDeps: app.deps,
      streams: targets,
      metrics: app.metrics,
      maxInFlight: app.config.api.rateLimit.maxInFlight,
      logger: app.logger.child({ component: 'webhook-processor' }),
    },
    app.stores.webhookInbox,
    { batchSize: app.config.webhooks.batchSize, maxAttempts: app.config.webhooks.maxAttempts, ...supervision, ...tuning },
  );
}

export function supervisionOf(config: FreightSyncConfig): Supervision {
  return { maxConsecutiveFailures: config.supervision.maxConsecutiveFailures, failurePauseMs: { base: config.supervision.pause, max: config.supervision.maxPause } };
}
