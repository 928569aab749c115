import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FreightSyncConfig } from '../../src/config/types.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, startDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { startSmtpSink, startWebhookReceiver, type ReceivedMail, type ReceivedPost } from '../helpers/notification-receivers.js';
import { pullConfig, startSim, tempDir } from '../helpers/pull-harness.js';
import { retrieveToken } from './simulator-helpers.js';

async function waitFor(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function evaluations(daemon: RunningDaemon): Promise<number> {
  return (await daemon.app.metrics.notificationEvaluations.get()).values[0]?.value ?? 0;
}

/** Waits until the notifier has evaluated `count` more times (instead of sleeping). */
async function moreEvaluations(daemon: RunningDaemon, count: number): Promise<void> {
  const start = await evaluations(daemon);
  await waitFor(async () => (await evaluations(daemon)) >= start + count, 30_000, `${count} more notification evaluations`);
}

/** `<event> <title>` of every JSON webhook post, in order. */
function webhookTitles(posts: readonly ReceivedPost[], channelPath: string): string[] {
  return posts.filter((p) => p.path === channelPath).map((p) => `${String(p.body['event'])} ${String(p.body['title'])}`);
}

function mailSubjects(mails: readonly ReceivedMail[]): string[] {
  return mails.map((m) => m.subject);
}

/**
 * The acceptance, end to end: the real daemon against the simulator, notifying a real
 * HTTP receiver (generic JSON webhook and Slack format) and a real SMTP server over loopback. A
 * stream failing three runs in a row, a dead letter and the stream's recovery are each exactly one
 * message per channel — also after more evaluations and after a restart with the dead letter
 * still open.
 */
describe('notifications from `run`', () => {
  let sim: SimulatorHandle;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  beforeAll(async () => {
    sim = await startSim({ variant: 'main', loads: 20, customers: 5, consignees: 5 });
    receiver = await startWebhookReceiver();
    smtp = await startSmtpSink();
  });
  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
    await smtp?.close();
  });

  async function config(dir: string): Promise<FreightSyncConfig> {
    const opsListen = `127.0.0.1:${await freePort()}`;
    return pullConfig({
      sim,
      dir,
      streams: ['loads'],
      // Every second, so three failed runs do not take three scheduler periods of a real deployment.
      streamSettings: { schedule: '* * * * * *' },
      raw: {
        api: {
          variant: sim.options.variant,
          baseUrl: sim.baseUrl,
          auth: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
          rateLimit: { requestsPerSecond: 2000, maxInFlight: 4, adaptive: true },
          // One attempt: a faulty API fails the run at once instead of after two minutes of retries.
          retry: { maxAttempts: 1, baseDelay: 'PT0.02S', maxDelay: 'PT0.05S', maxElapsed: 'PT5S' },
          timeout: 'PT5S',
        },
        http: { listen: opsListen },
        connectors: {
          out: { type: 'csv', options: { directory: path.join(dir, 'out') } },
          erp_inbox: { type: 'inbox', options: { dir: path.join(dir, 'inbox') } },
        },
        outbound: { enabled: true, sources: ['erp_inbox'], pollInterval: 'PT0.2S', maxAttempts: 3, backoff: { base: 'PT0.05S', max: 'PT0.2S' } },
        notifications: {
          interval: 'PT0.2S',
          streamFailures: 3,
          channels: [
            { name: 'ops-hook', type: 'webhook', url: receiver.url('/hook?token=hook-secret-123'), headers: { Authorization: 'Bearer receiver-secret-456' } },
            { name: 'chat', type: 'slack', url: receiver.url('/services/T000/B000/slack-secret-789') },
            { name: 'mail', type: 'email', smtp: { host: '127.0.0.1', port: smtp.port }, from: 'freight-sync@example.com', to: ['ops@example.com'] },
          ],
        },
      },
    });
  }

  it('a stream failing 3 runs in a row, a dead letter and the recovery: exactly one message each, on every channel, also across a restart', async () => {
    const dir = tempDir('notifications');
    const cfg = await config(dir);
    // Every API request fails (token requests at half the rate): the loads runs fail.
    sim.configure({ faults: { rate: 1, kinds: ['500'], slowMs: 0 } });
    let daemon = await startDaemon(cfg, dir, { runOnStart: true });
    try {
      // A status change the API cannot apply (no such load; while it fails, no answer at all): after
      // its attempts the outbound command is a dead letter.
      fs.mkdirSync(path.join(dir, 'inbox'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'inbox', 'orders.csv'), 'erp_key,kind,reference_number,status\r\nNOPE-00001,status,M99999999,AVAILABLE\r\n');

      const hook = () => webhookTitles(receiver.posts, '/hook?token=hook-secret-123');
      await waitFor(() => hook().some((t) => t.startsWith('opened Stream failing: loads')), 60_000, 'the stream-failing webhook');
      await waitFor(() => hook().some((t) => t.startsWith('opened Outbound dead letter')), 60_000, 'the dead-letter webhook');

      // The API comes back: the next run succeeds and the failing stream recovers.
      sim.configure({ faults: { rate: 0, kinds: ['500'], slowMs: 0 } });
      await waitFor(() => hook().some((t) => t.startsWith('recovered Recovered: Stream failing: loads')), 60_000, 'the recovery webhook');
      await waitFor(() => smtp.mails.length >= 3, 30_000, 'three e-mails');
      // More evaluations with the dead letter still open: nothing more is sent.
      await moreEvaluations(daemon, 5);
    } finally {
      await daemon.stop();
    }

    // A restart with the dead letter still open: it is not announced again.
    daemon = await startDaemon(cfg, dir, { runOnStart: true });
    try {
      await moreEvaluations(daemon, 5);
    } finally {
      await daemon.stop();
    }

    const expected = ['opened Stream failing: loads', 'opened Outbound dead letter: 1', 'recovered Recovered: Stream failing: loads'];
    expect(webhookTitles(receiver.posts, '/hook?token=hook-secret-123').sort()).toEqual([...expected].sort());
    const slack = receiver.posts.filter((p) => p.path.startsWith('/services/'));
    expect(slack.map((p) => String(p.body['text']).split('\n')[0]).sort()).toEqual(['Outbound dead letter: 1', 'Recovered: Stream failing: loads', 'Stream failing: loads']);
    expect(slack.every((p) => Array.isArray(p.body['blocks']))).toBe(true);
    expect(mailSubjects(smtp.mails).sort()).toEqual(['[freight-sync] Outbound dead letter: 1', '[freight-sync] Recovered: Stream failing: loads', '[freight-sync] Stream failing: loads']);
    expect(smtp.mails.every((m) => m.to.includes('ops@example.com') && m.from === 'freight-sync@example.com')).toBe(true);

    // Each message links to the console page of what it is about.
    const link = (titlePrefix: string) => receiver.posts.find((p) => String(p.body['title']).startsWith(titlePrefix))?.body['link'];
    expect(link('Stream failing')).toBe(`http://${cfg.http.listen}/console/streams/loads`);
    expect(link('Outbound dead letter')).toBe(`http://${cfg.http.listen}/console/outbox`);
    const failing = receiver.posts.find((p) => String(p.body['title']).startsWith('Stream failing'))!;
    expect(String((failing.body['items'] as Array<{ summary: string }>)[0]!.summary)).toMatch(/failed 3 run\(s\) in a row/);
    expect(smtp.mails.find((m) => m.subject.includes('dead letter'))!.raw).toContain(`http://${cfg.http.listen}/console/outbox`);
  });

  it('authentication lost: a brokerage refresh token that no longer works is announced once, linking to the console', async () => {
    const brokerage = await startSim({ variant: 'brokerage', loads: 10, customers: 5, consignees: 5, accessTokenTtlMs: 60_000 });
    try {
      const dir = tempDir('notifications-auth');
      const { access, refresh } = await retrieveToken(brokerage);
      const cfg = pullConfig({
        sim: brokerage,
        dir,
        streams: ['loads'],
        streamSettings: { schedule: '* * * * * *' },
        raw: {
          api: {
            variant: 'brokerage',
            baseUrl: brokerage.baseUrl,
            // Pre-issued tokens only: once the refresh token dies there is no way back in.
            auth: { accessToken: access, refreshToken: refresh },
            rateLimit: { requestsPerSecond: 2000, maxInFlight: 4, adaptive: true },
            retry: { maxAttempts: 1, baseDelay: 'PT0.02S', maxDelay: 'PT0.05S', maxElapsed: 'PT5S' },
            timeout: 'PT5S',
          },
          http: { listen: `127.0.0.1:${await freePort()}` },
          notifications: { interval: 'PT0.2S', channels: [{ name: 'auth-hook', type: 'webhook', url: receiver.url('/auth-hook') }] },
        },
      });
      const daemon = await startDaemon(cfg, dir, { runOnStart: true });
      try {
        const titles = () => webhookTitles(receiver.posts, '/auth-hook');
        // The refresh tokens are revoked and the access token expires (server clock moved past it).
        brokerage.revokeRefreshTokens();
        brokerage.advance(120_000);
        await waitFor(() => titles().includes('opened Authentication lost: api'), 60_000, 'the authentication-lost webhook');
        await moreEvaluations(daemon, 5);
        expect(titles().filter((t) => t.includes('Authentication lost'))).toEqual(['opened Authentication lost: api']);
        const post = receiver.posts.find((p) => p.path === '/auth-hook' && String(p.body['title']).startsWith('Authentication lost'))!;
        expect(post.body['link']).toBe(`http://${cfg.http.listen}/console/`);
        expect(JSON.stringify(post.body)).toMatch(/refresh token was rejected/);
      } finally {
        await daemon.stop();
      }
    } finally {
      await brokerage.close();
    }
  });
});
