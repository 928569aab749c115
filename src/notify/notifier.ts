import type { Logger } from '../util/logger.js';
import type { NotificationChannel } from './channels/channel.js';
import { conditionKey } from './conditions.js';
import { deliver, type DeliverySettings } from './deliver.js';
import { evaluateConditions, type ConditionSources } from './evaluate-conditions.js';
import { buildMessages, summaryMessage, type NotificationMessage } from './notification-message.js';
import { ChannelRateLimiter, type RateLimitSettings } from './rate-limit.js';
import { diffConditions, type AnnouncedCondition } from './transitions.js';

export type DeliveryOutcome = 'sent' | 'failed' | 'held';

export interface NotifierDeps {
  sources: ConditionSources;
  /** The announced conditions (the state database's `notification_conditions`). */
  store: {
    open(): Promise<AnnouncedCondition[]>;
    apply(change: { opened: readonly AnnouncedCondition[]; closed: readonly string[] }): Promise<void>;
  };
  channels: ReadonlyArray<{ channel: NotificationChannel; rateLimit: RateLimitSettings }>;
  settings: { streamFailures: number; lagThresholdMs?: number | undefined; delivery: DeliverySettings };
  consoleBaseUrl: string;
  logger: Logger;
  onDelivery?(channel: string, outcome: DeliveryOutcome): void;
  onEvaluated?(): void;
  now?: () => Date;
}

/**
 * Evaluates the conditions, works out what opened and what recovered since the last time
 * (persisted, so a restart re-sends nothing), and sends the resulting messages to every channel
 * through its rate limit. The state is updated before sending: a crash in between loses a
 * message rather than repeating it, and a failed delivery is logged and not retried forever.
 */
export class Notifier {
  private readonly slots: Array<{ channel: NotificationChannel; limiter: ChannelRateLimiter }>;
  private readonly now: () => Date;
  /** Completed evaluations (metrics; tests wait on it instead of sleeping). */
  evaluations = 0;

  constructor(private readonly deps: NotifierDeps) {
    this.now = deps.now ?? (() => new Date());
    this.slots = deps.channels.map(({ channel, rateLimit }) => ({ channel, limiter: new ChannelRateLimiter(rateLimit, () => this.now().getTime()) }));
  }

  async evaluate(signal: AbortSignal): Promise<void> {
    const now = this.now();
    const { settings, store } = this.deps;
    const observations = await evaluateConditions(this.deps.sources, { streamFailures: settings.streamFailures, lagThresholdMs: settings.lagThresholdMs, now });
    const { opened, recovered } = diffConditions(await store.open(), observations);
    let messages: NotificationMessage[] = [];
    if (opened.length > 0 || recovered.length > 0) {
      await store.apply({
        opened: opened.map((c) => ({ key: conditionKey(c.kind, c.subject), kind: c.kind, subject: c.subject, summary: c.summary, opened_at: now.toISOString() })),
        closed: recovered.map((r) => r.key),
      });
      messages = buildMessages({ opened, recovered }, this.deps.consoleBaseUrl, now);
      for (const message of messages) this.deps.logger.info({ event: message.event, items: message.items.length }, `notification: ${message.title}`);
    }
    await this.dispatch(messages, signal, false);
    this.evaluations += 1;
    this.deps.onEvaluated?.();
  }

  /** Sends what the rate limits still hold, whatever the limits (the daemon is stopping), and closes the channels. */
  async drain(signal: AbortSignal): Promise<void> {
    await this.dispatch([], signal, true);
    for (const { channel } of this.slots) {
      try {
        await channel.close?.();
      } catch (error) {
        this.deps.logger.warn({ err: error, channel: channel.name }, 'closing the notification channel failed');
      }
    }
  }

  private async dispatch(messages: readonly NotificationMessage[], signal: AbortSignal, draining: boolean): Promise<void> {
    await Promise.all(
      this.slots.map(async ({ channel, limiter }) => {
        const queue = limiter.offer(messages);
        for (let i = queue.length; i < messages.length; i++) this.deps.onDelivery?.(channel.name, 'held');
        const held = draining ? limiter.drain() : limiter.takeHeld();
        if (held && held.length > 0) queue.push(summaryMessage(held, this.deps.consoleBaseUrl, this.now()));
        // One at a time per channel, in order; channels do not wait for each other.
        for (const message of queue) {
          const sent = await deliver(channel, message, this.deps.settings.delivery, signal, this.deps.logger);
          this.deps.onDelivery?.(channel.name, sent ? 'sent' : 'failed');
        }
      }),
    );
  }
}

