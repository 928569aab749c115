import type { JsonWebhookChannelConfig } from '../../config/types.js';
import type { NotificationMessage } from '../notification-message.js';
import type { NotificationChannel } from './channel.js';
import { postJson } from './http-post.js';

/** The body of a generic webhook notification: the message as data, for any receiver to route. */
export function jsonWebhookBody(message: NotificationMessage): Record<string, unknown> {
  return { source: 'freight-sync', event: message.event, title: message.title, link: message.link, at: message.at, items: message.items };
}

export function jsonWebhookChannel(config: JsonWebhookChannelConfig): NotificationChannel {
  return {
    name: config.name,
    type: 'webhook',
    send: (message, signal) => postJson(config.name, config.url, jsonWebhookBody(message), config.headers, signal),
  };
}
