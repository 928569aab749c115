import type { FreightSyncConfig } from '../config/types.js';
import { createChannel } from '../notify/channels/create-channels.js';
import { consoleBaseUrl } from '../notify/console-link.js';
import type { ConditionSources } from '../notify/evaluate-conditions.js';
import { Notifier } from '../notify/notifier.js';
import { notifierService } from '../notify/notifier-service.js';
import type { ReconcileReport } from '../reconcile/report.js';
import type { AuthHealth } from '../api/auth-health.js';
import type { TokenManager } from '../api/token-manager.js';
import type { OpsMetrics } from '../ops/metrics.js';
import type { StateStores } from '../state/stores/index.js';
import type { Logger } from '../util/logger.js';
import type { DaemonService } from './daemon.js';
import type { ResolvedStream } from './stream-settings.js';

/** The parts of the opened app (AppContext) the notifier reads. */
export interface NotificationAppParts {
  readonly config: FreightSyncConfig;
  readonly logger: Logger;
  readonly streams: readonly ResolvedStream[];
  readonly stores: StateStores;
  readonly metrics: OpsMetrics;
  readonly authHealth: AuthHealth;
  readonly client: { readonly tokens: Pick<TokenManager, 'account' | 'reauthRequired'> };
}

/** The last reconcile `run` made, as the notifier reads it (set by the reconcile service's onReport). */
export class ReconcileResults {
  private last: ReconcileReport | undefined;

  record(report: ReconcileReport): void {
    this.last = report;
  }

  /** Differences per stream and sink; a repair that fixed everything leaves none. */
  differences(): ReturnType<ConditionSources['reconcile']> {
    if (!this.last) return undefined;
    return this.last.results.map((r) => {
      const unrepaired = r.repair ? r.repair.notRepaired.length : r.differences.length;
      return { stream: r.stream, sink: r.sink, differences: unrepaired, sample: r.differences.slice(0, 3).map((d) => `${d.key} ${d.kind}`) };
    });
  }
}


/** The notifications service of `run`; undefined when no channel is configured. */
export function composeNotifications(
  app: NotificationAppParts,
  options: { stopSignal: AbortSignal; abortSignal: AbortSignal; reconcile: ReconcileResults },
): DaemonService | undefined {
  const { notifications } = app.config;
  if (notifications.channels.length === 0) return undefined;
  const logger = app.logger.child({ component: 'notifications' });
  const notifier = new Notifier({
    sources: {
      streams: app.streams.filter((s) => !s.definition.pushOnly).map((s) => s.definition.name),
      runs: app.stores.runs,
      outbox: app.stores.outbox,
      quarantine: app.stores.quarantine,
      // The shared mark first: another process on the state may have found the tokens lost.
      auth: async () => {
        const mark = await app.client.tokens.reauthRequired();
        if (mark) return { state: 'lost' as const, message: `account ${app.client.tokens.account} is reauth_required since ${mark.since}: ${mark.reason}` };
        return app.authHealth.state;
      },
      reconcile: () => options.reconcile.differences(),
    },
    store: app.stores.notifications,
    channels: notifications.channels.map((config) => ({
      channel: createChannel(config, notifications.deliveryTimeout),
      rateLimit: { maxMessages: (config.rateLimit ?? notifications.rateLimit).maxMessages, perMs: (config.rateLimit ?? notifications.rateLimit).per },
    })),
    settings: {
      streamFailures: notifications.streamFailures,
      lagThresholdMs: notifications.lagThreshold,
      delivery: { attempts: notifications.deliveryAttempts, timeoutMs: notifications.deliveryTimeout, retryBaseMs: 1_000 },
    },
    consoleBaseUrl: consoleBaseUrl({ listen: app.config.http.listen, publicUrl: app.config.http.console.publicUrl }),
    logger,
    onDelivery: (channel, outcome) => app.metrics.notifications.inc({ channel, outcome }),
    onEvaluated: () => app.metrics.notificationEvaluations.inc(),
  });
  return notifierService({ notifier, intervalMs: notifications.interval, logger, stopSignal: options.stopSignal, abortSignal: options.abortSignal });
}
