import type { SlackChannelConfig } from '../../config/types.js';
import { messageText, type NotificationMessage } from '../notification-message.js';
import type { NotificationChannel } from './channel.js';
import { postJson } from './http-post.js';

/** Slack's `<url|label>` link syntax breaks on these characters in the label. */
function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * An incoming-webhook body (Slack, and the many tools that accept its format: Mattermost,
 * Rocket.Chat, Discord's `/slack` endpoint): `text` alone is enough for them; `blocks` make it
 * readable in Slack itself.
 */
export function slackBody(message: NotificationMessage): { text: string; blocks: unknown[] } {
  const icon = message.event === 'recovered' ? ':white_check_mark:' : message.event === 'summary' ? ':bell:' : ':rotating_light:';
  const lines = message.items.slice(0, 20).map((item) => `• ${escapeMrkdwn(item.summary)} (<${item.link}|open>)`);
  if (message.items.length > 20) lines.push(`… and ${message.items.length - 20} more`);
  return {
    text: messageText(message),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${icon} *${escapeMrkdwn(message.title)}*` } },
      { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n').slice(0, 2900) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<${message.link}|Open the console> · ${message.at}` }] },
    ],
  };
}

export function slackChannel(config: SlackChannelConfig): NotificationChannel {
  return { name: config.name, type: 'slack', send: (message, signal) => postJson(config.name, config.url, slackBody(message), {}, signal) };
}
