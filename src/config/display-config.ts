import { stringify } from 'yaml';
import { formatIsoDuration } from '../util/duration.js';
import { maskSecrets } from './mask-secrets.js';
import type { FreightSyncConfig, StreamSettings } from './types.js';

const STREAM_DURATIONS = ['lookback', 'safetyLag', 'maxWindow', 'minWindow'] as const satisfies readonly (keyof StreamSettings)[];

/**
 * The effective config as the user would write it: durations back in ISO 8601 (the effective
 * object holds milliseconds), secrets masked. Used by `validate-config` and startup logs.
 */
export function displayConfig(config: FreightSyncConfig): Record<string, unknown> {
  const streams: Record<string, unknown> = {};
  for (const [name, stream] of Object.entries(config.sync.streams)) {
    streams[name] = stream ? { ...stream, ...durations(stream) } : stream;
  }
  const display = {
    ...config,
    api: {
      ...config.api,
      refreshBeforeExpiry: formatIsoDuration(config.api.refreshBeforeExpiry),
      timeout: formatIsoDuration(config.api.timeout),
      retry: {
        ...config.api.retry,
        maxElapsed: formatIsoDuration(config.api.retry.maxElapsed),
        baseDelay: formatIsoDuration(config.api.retry.baseDelay),
        maxDelay: formatIsoDuration(config.api.retry.maxDelay),
      },
    },
    sync: { defaults: { ...config.sync.defaults, ...durations(config.sync.defaults) }, streams },
  };
  return maskSecrets(display);
}

export function displayConfigYaml(config: FreightSyncConfig): string {
  return stringify(displayConfig(config), { lineWidth: 0 });
}

function durations(settings: StreamSettings): Record<string, string> {
  return Object.fromEntries(STREAM_DURATIONS.map((key) => [key, formatIsoDuration(settings[key])]));
}
