import type { NotificationMessage } from './notification-message.js';

export interface RateLimitSettings {
  maxMessages: number;
  /** Milliseconds of the sliding window. */
  perMs: number;
}

/**
 * One channel's rate limit: at most `maxMessages` in any window of `perMs`. A message over the
 * limit is held, never dropped; once the window has room again, everything held goes out as ONE
 * summary (so a burst of 200 dead letters is a few messages, not 200, and none is lost).
 * Messages never overtake held ones: while anything is held, new messages join the summary.
 */
export class ChannelRateLimiter {
  private readonly sentAt: number[] = [];
  private readonly held: NotificationMessage[] = [];

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** The messages to send now among `messages` (the rest are held). */
  offer(messages: readonly NotificationMessage[]): NotificationMessage[] {
    const send: NotificationMessage[] = [];
    for (const message of messages) {
      if (this.held.length === 0 && this.hasRoom()) {
        this.sentAt.push(this.now());
        send.push(message);
      } else {
        this.held.push(message);
      }
    }
    return send;
  }

  /** The held messages, when the window has room for their summary (it takes one slot). */
  takeHeld(): NotificationMessage[] | undefined {
    if (this.held.length === 0 || !this.hasRoom()) return undefined;
    this.sentAt.push(this.now());
    return this.held.splice(0);
  }

  /** Everything held, regardless of the limit (the daemon is stopping). */
  drain(): NotificationMessage[] {
    return this.held.splice(0);
  }

  get heldCount(): number {
    return this.held.length;
  }

  private hasRoom(): boolean {
    const since = this.now() - this.settings.perMs;
    while (this.sentAt.length > 0 && this.sentAt[0]! <= since) this.sentAt.shift();
    return this.sentAt.length < this.settings.maxMessages;
  }
}
