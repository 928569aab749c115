import type { NotificationMessage } from '../notification-message.js';

/** A destination of notifications. `send` throws a `NotificationDeliveryError` when it was not delivered. */
export interface NotificationChannel {
  readonly name: string;
  readonly type: string;
  send(message: NotificationMessage, signal: AbortSignal): Promise<void>;
  close?(): Promise<void> | void;
}

/** A delivery that did not go through; the message names the channel, never its URL (it holds a token). */
export class NotificationDeliveryError extends Error {
  constructor(channel: string, reason: string, options?: { cause?: unknown }) {
    super(`notification channel ${channel}: ${reason}`, options);
    this.name = 'NotificationDeliveryError';
  }
}
