import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse-config.js';
import { createChannel } from '../../src/notify/channels/create-channels.js';
import { deliver } from '../../src/notify/deliver.js';
import { evaluateConditions, type ConditionSources } from '../../src/notify/evaluate-conditions.js';
import { minimalRaw } from '../helpers/config-fixtures.js';
import { freePort } from '../helpers/daemon-harness.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { startWebhookReceiver } from '../helpers/notification-receivers.js';

function sources(over: Partial<ConditionSources> = {}): ConditionSources {
  return {
    streams: ['loads', 'invoices'],
    runs: {
      lastVerdicts: async (stream, limit) =>
        stream === 'loads' ? [{ status: 'failed', error: 'HTTP 500\nat line 2' }, { status: 'failed', error: null }, { status: 'failed', error: null }].slice(0, limit) : [{ status: 'failed', error: 'x' }, { status: 'ok', error: null }],
      lastSuccesses: async () => [{ stream: 'invoices', finishedAt: '2026-01-01T00:00:00.000Z' }],
    },
    outbox: { deadLetters: async () => [] },
    quarantine: { counts: async () => [{ stream: 'loads', kind: 'sink', count: 2 }, { stream: 'loads', kind: 'webhook', count: 1 }, { stream: 'bills', kind: 'api-schema', count: 0 }] },
    auth: () => ({ state: 'unknown' }),
    reconcile: () => undefined,
    ...over,
  };
}

describe('evaluateConditions', () => {
  const now = new Date('2026-01-01T03:00:00.000Z');

  it('failing after N failed runs in a row, lagging past the threshold, rejected records per stream and kind', async () => {
    const observations = await evaluateConditions(sources(), { streamFailures: 3, lagThresholdMs: 2 * 3_600_000, now });
    const open = Object.fromEntries(observations.map((o) => [o.kind, o.open.map((c) => `${c.subject}: ${c.summary}`)]));
    expect(open['stream-failing']).toEqual(['loads: stream loads failed 3 run(s) in a row: HTTP 500 at line 2']);
    expect(open['stream-lagging']).toEqual(['invoices: stream invoices has had no successful run since 2026-01-01T00:00:00.000Z (180 min ago)']);
    expect(open['rejected-records']).toEqual([
      'loads/sink: 2 loads record(s) rejected (refused by a sink)',
      'loads/webhook: 1 webhook event(s) for loads failed and are parked',
    ]);
    // Nothing known about auth or reconcile yet: those kinds are not evaluated (not "recovered").
    expect(observations.map((o) => o.kind)).not.toContain('auth-lost');
    expect(observations.map((o) => o.kind)).not.toContain('reconcile-differences');
  });

  it('needs N verdicts: two failed runs are not yet three', async () => {
    const observations = await evaluateConditions(sources(), { streamFailures: 4, now });
    expect(observations.find((o) => o.kind === 'stream-failing')!.open).toEqual([]);
    expect(observations.find((o) => o.kind === 'stream-lagging')!.open).toEqual([]);
  });

  it('auth lost and reconcile differences once they are known', async () => {
    const observations = await evaluateConditions(
      sources({
        auth: () => ({ state: 'lost', message: 'the refresh token was rejected (HTTP 401)' }),
        reconcile: () => [
          { stream: 'loads', sink: 'erp', differences: 2, sample: ['M1 missing', 'M2 stale'] },
          { stream: 'invoices', sink: 'erp', differences: 0, sample: [] },
        ],
      }),
      { streamFailures: 3, now },
    );
    const open = Object.fromEntries(observations.map((o) => [o.kind, o.open.map((c) => c.summary)]));
    expect(open['auth-lost']).toEqual(['authentication lost: the refresh token was rejected (HTTP 401)']);
    expect(open['reconcile-differences']).toEqual(['reconcile found 2 difference(s) between the API and sink erp for loads, e.g. M1 missing; M2 stale']);
  });
});

describe('channel delivery failures', () => {
  it('a Slack URL that refuses connections: bounded attempts, logged by channel name, the URL token never in the log', async () => {
    const url = `http://127.0.0.1:${await freePort()}/services/T1/B1/slack-url-token-abcdef`;
    const config = parseConfig({ ...minimalRaw(), notifications: { channels: [{ name: 'chat', type: 'slack', url }] } });
    const channel = createChannel(config.notifications.channels[0]!, 2_000);
    const { logger, text } = capturingLogger();
    const message = { event: 'opened' as const, title: 'Stream failing: loads', items: [], link: 'http://x/console/', at: new Date(0).toISOString() };
    const sent = await deliver(channel, message, { attempts: 2, timeoutMs: 2_000, retryBaseMs: 1 }, new AbortController().signal, logger);
    expect(sent).toBe(false);
    expect(text()).toMatch(/notification channel chat: POST failed: .*ECONNREFUSED/);
    expect(text()).toMatch(/giving up on it/);
    expect(text()).not.toContain('slack-url-token-abcdef');
  });

  it('a receiver answering 503 once: delivered by the second attempt', async () => {
    const receiver = await startWebhookReceiver();
    try {
      receiver.failNext(1);
      const config = parseConfig({ ...minimalRaw(), notifications: { channels: [{ name: 'hook', type: 'webhook', url: receiver.url('/h') }] } });
      const channel = createChannel(config.notifications.channels[0]!, 2_000);
      const { logger } = capturingLogger();
      const message = { event: 'recovered' as const, title: 'Recovered: x', items: [], link: 'http://x/console/', at: new Date(0).toISOString() };
      expect(await deliver(channel, message, { attempts: 3, timeoutMs: 2_000, retryBaseMs: 1 }, new AbortController().signal, logger)).toBe(true);
      expect(receiver.posts.map((p) => p.body['title'])).toEqual(['Recovered: x']);
    } finally {
      await receiver.close();
    }
  });
});

describe('notifications config', () => {
  it('names the channel field at fault', () => {
    const problems = (channels: unknown[]) => {
      try {
        parseConfig({ ...minimalRaw(), notifications: { channels } });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problems([{ name: 'a', type: 'teams', url: 'https://x.example.com' }])).toMatch(/notifications\.channels\[0\]\.type: .*'webhook' \| 'slack' \| 'email'/);
    const email = problems([{ name: 'm', type: 'email', smtp: {}, from: 'nope', to: [] }]);
    expect(email).toMatch(/notifications\.channels\[0\]\.smtp\.host: is required/);
    expect(email).toMatch(/notifications\.channels\[0\]\.from: expected an e-mail address such as ops@example.com/);
    expect(problems([{ name: 'a', type: 'slack', url: 'https://x.example.com/1' }, { name: 'a', type: 'slack', url: 'https://x.example.com/2' }])).toMatch(
      /notifications\.channels\[1\]\.name: channel name a is used twice/,
    );
  });
});
