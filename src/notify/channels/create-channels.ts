import type { NotificationChannelConfig } from '../../config/types.js';
import type { NotificationChannel } from './channel.js';
import { emailChannel } from './email.js';
import { jsonWebhookChannel } from './json-webhook.js';
import { slackChannel } from './slack-webhook.js';

export function createChannel(config: NotificationChannelConfig, timeoutMs: number): NotificationChannel {
  switch (config.type) {
    case 'webhook':
      return jsonWebhookChannel(config);
    case 'slack':
      return slackChannel(config);
    case 'email':
      return emailChannel(config, timeoutMs);
  }
}
