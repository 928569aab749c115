import { stringify } from 'yaml';
import { formatIsoDuration } from '../util/duration.js';
import { maskSecrets } from './mask-secrets.js';
import type { FreightSyncConfig, HttpConfig, NotificationRateLimit, NotificationsConfig, OutboundConfig, StreamSettings, SupervisionConfig, WebhooksConfig } from './types.js';

/*
 * Every duration of the effective config, per section. The effective object holds milliseconds
 * but the file takes only ISO 8601, so each one must be turned back or the printed config would
 * not load again (test/unit/config-display.test.ts loads it again to catch a key missing here).
 */
const API_DURATIONS = ['refreshBeforeExpiry', 'timeout'] as const satisfies readonly (keyof FreightSyncConfig['api'])[];
const RETRY_DURATIONS = ['maxElapsed', 'baseDelay', 'maxDelay'] as const satisfies readonly (keyof FreightSyncConfig['api']['retry'])[];
const STREAM_DURATIONS = ['lookback', 'safetyLag', 'maxWindow', 'minWindow'] as const satisfies readonly (keyof StreamSettings)[];
const OUTBOUND_DURATIONS = ['pollInterval', 'reconcileDelay'] as const satisfies readonly (keyof OutboundConfig)[];
const BACKOFF_DURATIONS = ['base', 'max'] as const satisfies readonly (keyof OutboundConfig['backoff'])[];
const WEBHOOK_DURATIONS = ['dedupeWindow', 'catchUpInterval', 'catchUpOverlap', 'catchUpMaxAge'] as const satisfies readonly (keyof WebhooksConfig)[];
const HTTP_DURATIONS = ['readyCacheTtl', 'checkTimeout', 'apiUnreachableAfter'] as const satisfies readonly (keyof HttpConfig)[];
const SUPERVISION_DURATIONS = ['pause', 'maxPause'] as const satisfies readonly (keyof SupervisionConfig)[];
const CLUSTER_DURATIONS = ['leaseTtl', 'claimInterval', 'heartbeat'] as const satisfies readonly (keyof FreightSyncConfig['cluster'])[];
const NOTIFICATION_DURATIONS = ['interval', 'deliveryTimeout'] as const satisfies readonly (keyof NotificationsConfig)[];

/**
 * The effective config as the user would write it: durations back in ISO 8601, secrets masked.
 * Used by `validate-config` and startup logs; what it prints loads again as the same config
 * (apart from masked secrets).
 */
export function displayConfig(config: FreightSyncConfig): Record<string, unknown> {
  const streams: Record<string, unknown> = {};
  for (const [name, stream] of Object.entries(config.sync.streams)) {
    streams[name] = stream ? { ...stream, ...durations(stream, STREAM_DURATIONS) } : stream;
  }
  const display = {
    ...config,
    api: {
      ...config.api,
      ...durations(config.api, API_DURATIONS),
      retry: { ...config.api.retry, ...durations(config.api.retry, RETRY_DURATIONS) },
    },
    sync: { defaults: { ...config.sync.defaults, ...durations(config.sync.defaults, STREAM_DURATIONS) }, streams },
    outbound: {
      ...config.outbound,
      ...durations(config.outbound, OUTBOUND_DURATIONS),
      backoff: { ...config.outbound.backoff, ...durations(config.outbound.backoff, BACKOFF_DURATIONS) },
    },
    webhooks: { ...config.webhooks, ...durations(config.webhooks, WEBHOOK_DURATIONS) },
    http: { ...config.http, ...durations(config.http, HTTP_DURATIONS) },
    supervision: { ...config.supervision, ...durations(config.supervision, SUPERVISION_DURATIONS) },
    cluster: { ...config.cluster, ...durations(config.cluster, CLUSTER_DURATIONS) },
    notifications: displayNotifications(config.notifications),
  };
  return maskSecrets(display);
}

function displayNotifications(n: NotificationsConfig): Record<string, unknown> {
  const rate = (r: NotificationRateLimit) => ({ maxMessages: r.maxMessages, per: formatIsoDuration(r.per) });
  return {
    ...n,
    ...durations(n, NOTIFICATION_DURATIONS),
    ...(n.lagThreshold === undefined ? {} : { lagThreshold: formatIsoDuration(n.lagThreshold) }),
    rateLimit: rate(n.rateLimit),
    channels: n.channels.map((c) => (c.rateLimit === undefined ? c : { ...c, rateLimit: rate(c.rateLimit) })),
  };
}

export function displayConfigYaml(config: FreightSyncConfig): string {
  return stringify(displayConfig(config), { lineWidth: 0 });
}

function durations<T, K extends keyof T & string>(section: T, keys: readonly K[]): Record<K, string> {
  return Object.fromEntries(keys.map((key) => [key, formatIsoDuration(section[key] as number)])) as Record<K, string>;
}
