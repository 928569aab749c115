import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { displayConfig, displayConfigYaml } from '../../src/config/display-config.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { minimalRaw } from '../helpers/config-fixtures.js';

/** A config that sets a non-default value in every section that holds a duration. */
function everySection(): Record<string, any> {
  const raw = minimalRaw();
  raw.api.timeout = 'PT45S';
  raw.api.retry = { baseDelay: 'PT0.25S', maxElapsed: 'PT1H30M' };
  raw.sync.defaults = { lookback: 'PT15M', maxWindow: 'P2D' };
  raw.sync.streams.loads.safetyLag = 'PT1M5S';
  raw.outbound = { enabled: true, pollInterval: 'PT5S', backoff: { base: 'PT3S', max: 'PT20M' }, reconcileDelay: 'PT1.5S' };
  raw.webhooks = { enabled: true, secret: 'whsec-1', dedupeWindow: 'PT2H', catchUpInterval: 'PT0S', catchUpOverlap: 'PT3M', catchUpMaxAge: 'P14D' };
  raw.http = {
    readyCacheTtl: 'PT10S',
    checkTimeout: 'PT2S',
    console: { enabled: true, auth: { basic: { username: 'ops', password: 'console-pw-1' } }, publicUrl: 'https://sync.example.com' },
  };
  raw.notifications = {
    interval: 'PT45S',
    lagThreshold: 'PT6H',
    deliveryTimeout: 'PT3S',
    rateLimit: { maxMessages: 4, per: 'PT30M' },
    channels: [
      { name: 'chat', type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/slack-token-xyz', rateLimit: { maxMessages: 2, per: 'PT5M' } },
      { name: 'hook', type: 'webhook', url: 'https://alerts.example.com/in', headers: { 'X-Api-Key': 'hook-key-123456' } },
      { name: 'mail', type: 'email', smtp: { host: 'smtp.example.com', username: 'sync', password: 'smtp-pass-123' }, from: 'sync@example.com', to: ['ops@example.com'] },
    ],
  };
  return raw;
}

describe('displayConfig', () => {
  it('prints every duration as ISO 8601', () => {
    const shown = displayConfig(parseConfig(everySection())) as Record<string, any>;
    expect(shown.outbound).toMatchObject({ pollInterval: 'PT5S', reconcileDelay: 'PT1.5S', backoff: { base: 'PT3S', max: 'PT20M' } });
    expect(shown.webhooks).toMatchObject({ dedupeWindow: 'PT2H', catchUpInterval: 'PT0S', catchUpOverlap: 'PT3M', catchUpMaxAge: 'P14D' });
    expect(shown.http).toMatchObject({ readyCacheTtl: 'PT10S', checkTimeout: 'PT2S' });
    expect(shown.notifications).toMatchObject({ interval: 'PT45S', lagThreshold: 'PT6H', deliveryTimeout: 'PT3S', rateLimit: { maxMessages: 4, per: 'PT30M' } });
    expect(shown.notifications.channels[0]).toMatchObject({ url: 'https://hooks.slack.com/[REDACTED]', rateLimit: { per: 'PT5M' } });
    expect(shown.notifications.channels[1].headers).toEqual({ 'X-Api-Key': '[REDACTED]' });
    expect(shown.notifications.channels[2].smtp.password).toBe('[REDACTED]');
    expect(shown.api.retry).toMatchObject({ baseDelay: 'PT0.25S', maxElapsed: 'PT1H30M' });
    expect(shown.sync.streams.loads).toMatchObject({ lookback: 'PT15M', safetyLag: 'PT1M5S', maxWindow: 'P2D' });
  });

  it('prints a config that loads again as the same config (apart from masked secrets)', () => {
    const original = parseConfig(everySection());
    const printed = parse(displayConfigYaml(original)) as Record<string, any>;
    expect(printed.api.auth.clientSecret).toBe('[REDACTED]');
    const reloaded = parseConfig(printed);
    expect(reloaded).toEqual({
      ...original,
      api: { ...original.api, auth: { ...original.api.auth, clientSecret: '[REDACTED]' } },
      webhooks: { ...original.webhooks, secret: '[REDACTED]' },
      http: { ...original.http, console: { ...original.http.console, auth: { basic: { username: 'ops', password: '[REDACTED]' } } } },
      notifications: {
        ...original.notifications,
        channels: [
          { ...original.notifications.channels[0]!, url: 'https://hooks.slack.com/[REDACTED]' },
          { ...original.notifications.channels[1]!, url: 'https://alerts.example.com/[REDACTED]', headers: { 'X-Api-Key': '[REDACTED]' } },
          { ...original.notifications.channels[2]!, smtp: { ...(original.notifications.channels[2] as { smtp: object }).smtp, password: '[REDACTED]' } },
        ],
      },
    });
    expect(displayConfigYaml(original)).not.toContain('console-pw-1');
  });
});
