import { describeError } from '../../util/errors.js';
import { NotificationDeliveryError } from './channel.js';

/**
 * POSTs a JSON body; any answer but 2xx is a failure. The error names the channel and the status,
 * never the URL: incoming-webhook URLs carry their token.
 */
export async function postJson(channel: string, url: string, body: unknown, headers: Record<string, string>, signal: AbortSignal): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'freight-sync notifications', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    throw new NotificationDeliveryError(channel, `POST failed: ${describeError(cause)}`, { cause: error });
  }
  // Read the body in full so the connection is released; its text helps when the receiver explains a refusal.
  const text = await response.text().catch(() => '');
  if (!response.ok) throw new NotificationDeliveryError(channel, `the receiver answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}
