import { createHmac } from 'node:crypto';
import type { EventLog, EventRecord } from './events.js';
import type { SimulatorOptions } from './options.js';
import type { SimulatorStats } from './stats.js';

/** Backoff between attempts: a non-200 answer is retried this many more times. */
const RETRY_DELAYS_MS = [200, 1_000, 3_000];
const ATTEMPT_TIMEOUT_MS = 5_000;

export function signBody(secret: string, body: string): string {
  return `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;
}

/**
 * Delivers events one at a time, in order, as signed JSON POSTs. Sequential on purpose: a receiver
 * that is slow delays later events, which is what real senders do too.
 */
export class WebhookSender {
  private queue: EventRecord[] = [];
  private running = false;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly getConfig: () => SimulatorOptions['webhooks'],
    private readonly log: EventLog,
    private readonly stats: () => SimulatorStats,
    /** Applied to each body as it is sent (the `realShapes` switch); the event log keeps the original. */
    private readonly shapeBody: (body: unknown) => unknown = (body) => body,
  ) {}

  wants(eventType: string): boolean {
    const config = this.getConfig();
    if (!config) return false;
    if (!config.types || config.types.length === 0) return true;
    const family = eventType.split('#')[0] ?? '';
    return config.types.includes(eventType) || config.types.includes(family);
  }

  enqueue(record: EventRecord): void {
    if (this.closed || !this.wants(record.eventType)) return;
    this.queue.push(record);
    if (!this.running) void this.drain();
  }

  /** Resolves when every queued delivery has finished (success or given up). */
  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0 && !this.closed) {
      const record = this.queue.shift() as EventRecord;
      await this.deliver(record);
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async deliver(record: EventRecord): Promise<void> {
    const body = JSON.stringify(this.shapeBody(record.data));
    for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length && !this.closed; attempt++) {
      const config = this.getConfig();
      if (!config) return;
      let status: number | null = null;
      const sentAt = this.log.now();
      try {
        const response = await fetch(config.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Hub-Signature': signBody(config.secret, body) },
          body,
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        });
        status = response.status;
        await response.arrayBuffer().catch(() => undefined);
      } catch {
        status = null;
      }
      record.webhookUrl = config.url;
      this.log.touch(record, status);
      if (status === 200) {
        record.timing.sentAt = sentAt;
        record.timing.answeredAt = this.log.now();
        this.stats().webhooksSent++;
        return;
      }
      this.stats().webhooksFailed++;
      const delay = RETRY_DELAYS_MS[attempt];
      if (delay === undefined) {
        this.stats().webhooksGivenUp++;
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          resolve();
        }, delay);
        this.timers.add(timer);
      });
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.queue = [];
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
