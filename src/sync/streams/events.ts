import { pushOnlyStream } from './push-only.js';

/**
 * Every webhook event the receiver accepted (or the catch-up read from the event log), as the
 * ERP may want the change itself, not only the refreshed record. One record per inbox entry:
 * `{ event_key, eventType, family, reference_number, occurred_at, received_at, source, payload }`
 * where `payload` is the delivered body unwrapped from brokerage's `data` envelope (§6.4).
 * Keyed by the inbox key, so a delivery and the same event read back from the log are one row.
 */
export const eventsStream = pushOnlyStream({
  name: 'events',
  description: 'Webhook events as received (push only; fed by the webhook receiver)',
  keyFields: ['event_key'],
  updatedAtFields: ['occurred_at', 'received_at'],
});
