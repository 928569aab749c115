import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import type { Condition, Observation } from '../../src/notify/conditions.js';
import { buildMessages, type NotificationMessage } from '../../src/notify/notification-message.js';
import { ChannelRateLimiter } from '../../src/notify/rate-limit.js';
import { diffConditions } from '../../src/notify/transitions.js';
import { Notifier } from '../../src/notify/notifier.js';
import type { ConditionSources } from '../../src/notify/evaluate-conditions.js';
import type { NotificationChannel } from '../../src/notify/channels/channel.js';
import { NotificationStore } from '../../src/state/stores/notification-store.js';
import type { StateTables } from '../../src/state/tables.js';
import { silentLogger } from '../../src/util/logger.js';
import { freshStateDatabase } from '../helpers/state-db.js';

const failing = (stream: string): Condition => ({ kind: 'stream-failing', subject: stream, summary: `stream ${stream} failed` });

function message(title: string): NotificationMessage {
  return { event: 'opened', title, items: [], link: 'http://x/console/', at: new Date(0).toISOString() };
}

describe('diffConditions (deduplication)', () => {
  const announced = [{ key: 'stream-failing:loads', kind: 'stream-failing', subject: 'loads', summary: 'stream loads failed', opened_at: 'then' }];

  it('announces a new condition, not one still open, and recovers one that cleared', () => {
    const observations: Observation[] = [{ kind: 'stream-failing', open: [failing('loads'), failing('invoices')] }];
    expect(diffConditions(announced, observations)).toEqual({ opened: [failing('invoices')], recovered: [] });
    expect(diffConditions(announced, [{ kind: 'stream-failing', open: [] }])).toEqual({ opened: [], recovered: announced });
  });

  it('leaves a kind that was not evaluated as it is (no recovery from not knowing)', () => {
    expect(diffConditions(announced, [{ kind: 'auth-lost', open: [] }])).toEqual({ opened: [], recovered: [] });
  });
});

describe('ChannelRateLimiter', () => {
  let now = 0;
  const limiter = () => new ChannelRateLimiter({ maxMessages: 2, perMs: 60_000 }, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('sends up to the limit, holds the rest, and releases them as one batch when the window has room', () => {
    const rl = limiter();
    expect(rl.offer([message('a'), message('b'), message('c')]).map((m) => m.title)).toEqual(['a', 'b']);
    expect(rl.offer([message('d')])).toEqual([]);
    expect(rl.heldCount).toBe(2);
    expect(rl.takeHeld()).toBeUndefined();
    now += 60_001;
    expect(rl.takeHeld()?.map((m) => m.title)).toEqual(['c', 'd']);
    expect(rl.heldCount).toBe(0);
    // The summary took one slot of the new window: one more message fits, the next is held.
    expect(rl.offer([message('e'), message('f')]).map((m) => m.title)).toEqual(['e']);
    expect(rl.drain().map((m) => m.title)).toEqual(['f']);
  });

  it('never lets a new message overtake held ones', () => {
    const rl = limiter();
    rl.offer([message('a'), message('b'), message('c')]);
    now += 60_001;
    // Room again, but `c` is still held: `d` joins it instead of going first.
    expect(rl.offer([message('d')])).toEqual([]);
    expect(rl.takeHeld()?.map((m) => m.title)).toEqual(['c', 'd']);
  });
});

describe('buildMessages', () => {
  it('groups what opened together by kind and links each to its console page', () => {
    const messages = buildMessages(
      { opened: [failing('loads'), failing('invoices'), { kind: 'dead-letter', subject: '7', summary: 'dead' }], recovered: [] },
      'https://sync.example.com',
      new Date(0),
    );
    expect(messages.map((m) => [m.title, m.link])).toEqual([
      ['Stream failing (2)', 'https://sync.example.com/console/'],
      ['Outbound dead letter: 7', 'https://sync.example.com/console/outbox'],
    ]);
    expect(messages[0]!.items.map((i) => i.link)).toEqual(['https://sync.example.com/console/streams/loads', 'https://sync.example.com/console/streams/invoices']);
  });

  it('links every kind to its console page, recovered ones too', () => {
    const opened: Condition[] = [
      { kind: 'rejected-records', subject: 'loads/sink', summary: 'r' },
      { kind: 'rejected-records', subject: 'loads/webhook', summary: 'w' },
      { kind: 'reconcile-differences', subject: 'invoices/erp', summary: 'd' },
      { kind: 'auth-lost', subject: 'api', summary: 'a' },
    ];
    const recovered = [{ key: 'stream-lagging:bills', kind: 'stream-lagging', subject: 'bills', summary: 'lag', opened_at: 'then' }];
    const links = buildMessages({ opened, recovered }, 'http://127.0.0.1:9090', new Date(0)).flatMap((m) => m.items.map((i) => i.link));
    expect(links).toEqual([
      'http://127.0.0.1:9090/console/rejected',
      'http://127.0.0.1:9090/console/webhooks',
      'http://127.0.0.1:9090/console/streams/invoices',
      'http://127.0.0.1:9090/console/',
      'http://127.0.0.1:9090/console/streams/bills',
    ]);
  });
});

/** The notifier with the real state store (SQLite) and an in-memory channel that records what it is given. */
describe('Notifier', () => {
  let db: Kysely<StateTables>;
  beforeEach(async () => {
    ({ db } = await freshStateDatabase());
  });
  afterEach(async () => db.destroy());

  function setup(state: { failing: boolean; dead: number[] }, channel: NotificationChannel, rate = { maxMessages: 10, perMs: 3_600_000 }) {
    const sources: ConditionSources = {
      streams: ['loads'],
      runs: {
        lastVerdicts: async (_s, limit) => Array.from({ length: limit }, () => ({ status: state.failing ? 'failed' : 'ok', error: state.failing ? 'HTTP 500' : null })),
        lastSuccesses: async () => [],
      },
      outbox: { deadLetters: async () => state.dead.map((id) => ({ id, kind: 'change_status', erp_key: `K${id}`, last_error: 'rejected' })) },
      quarantine: { counts: async () => [] },
      auth: () => ({ state: 'unknown' }),
      reconcile: () => undefined,
    };
    return () =>
      new Notifier({
        sources,
        store: new NotificationStore(db),
        channels: [{ channel, rateLimit: rate }],
        settings: { streamFailures: 3, delivery: { attempts: 2, timeoutMs: 1_000, retryBaseMs: 1 } },
        consoleBaseUrl: 'http://127.0.0.1:9090',
        logger: silentLogger(),
      });
  }

  function recorder(): NotificationChannel & { sent: string[] } {
    const sent: string[] = [];
    return { name: 'memory', type: 'memory', sent, send: async (m) => void sent.push(m.title) };
  }

  it('opens once, stays quiet while open (also in a new notifier on the same state), recovers once', async () => {
    const state = { failing: true, dead: [4] };
    const channel = recorder();
    const make = setup(state, channel);
    const signal = new AbortController().signal;
    const first = make();
    await first.evaluate(signal);
    await first.evaluate(signal);
    // A restart: a new notifier reads what the first one announced.
    const second = make();
    await second.evaluate(signal);
    expect(channel.sent).toEqual(['Stream failing: loads', 'Outbound dead letter: 4']);
    state.failing = false;
    state.dead = [4, 5];
    await second.evaluate(signal);
    await second.evaluate(signal);
    expect(channel.sent).toEqual(['Stream failing: loads', 'Outbound dead letter: 4', 'Outbound dead letter: 5', 'Recovered: Stream failing: loads']);
  });

  it('summarises what the rate limit held back instead of dropping it, and sends the rest on stop', async () => {
    const state = { failing: false, dead: [1] };
    const channel = recorder();
    const notifier = setup(state, channel, { maxMessages: 1, perMs: 3_600_000 })();
    const signal = new AbortController().signal;
    await notifier.evaluate(signal);
    state.dead = [1, 2];
    await notifier.evaluate(signal);
    state.dead = [1, 2, 3];
    await notifier.evaluate(signal);
    expect(channel.sent).toEqual(['Outbound dead letter: 1']);
    await notifier.drain(signal);
    expect(channel.sent).toEqual(['Outbound dead letter: 1', '2 notification(s) held back by the rate limit: Outbound dead letter: 2; Outbound dead letter: 3']);
  });

  it('a channel that keeps failing is retried a bounded number of times and never throws', async () => {
    let calls = 0;
    const broken: NotificationChannel = {
      name: 'broken',
      type: 'memory',
      send: async () => {
        calls += 1;
        throw new Error('connection refused');
      },
    };
    const notifier = setup({ failing: true, dead: [] }, broken)();
    await expect(notifier.evaluate(new AbortController().signal)).resolves.toBeUndefined();
    expect(calls).toBe(2);
    // Given up, not re-sent at the next evaluation: the condition counts as announced.
    await notifier.evaluate(new AbortController().signal);
    expect(calls).toBe(2);
  });
});
