import { createHash } from 'node:crypto';
import { FreightSyncError } from '../util/errors.js';

/** A body that is not a JSON object with an `eventType` (or `event_type`): refused with 400, never stored. */
export class WebhookPayloadError extends FreightSyncError {
  constructor(message: string) {
    super('WEBHOOK_PAYLOAD', message);
  }
}

export function isWebhookPayloadError(error: unknown): error is WebhookPayloadError {
  return error instanceof WebhookPayloadError;
}

/** What the processor needs from one event, whatever variant or family it came from. */
export interface ParsedEvent {
  /** Stable identity: `event:<id>` when the body is an event record, else `body:<sha256>`. */
  key: string;
  eventType: string;
  /** The part before `#`: `load`, `invoice`, `document`, `driver`, `appointments`, `tendor`. */
  family: string;
  referenceNumber: string | null;
  /** The event's own data: brokerage load payloads unwrapped from their `data` envelope (§6.4). */
  payload: Record<string, unknown>;
}

export function bodyKey(rawBody: string | Buffer): string {
  return `body:${createHash('sha256').update(rawBody).digest('hex')}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  return null;
}

/**
 * Reads a delivered body. Shapes (§6.4): main load/document events carry `eventType`,
 * `reference_number`, `_id` (the LOAD id, not an event id), `changedValues`; brokerage wraps load
 * payloads as `{ eventType, data: {...} }`; invoice events carry the invoice in `data` and the
 * load reference in its entries. A body shaped like an event record (§6.2: `eventType`, `data`,
 * `createdAt`, `webhookUrl`) is unwrapped and keyed by its event `_id`.
 */
export function parseEvent(rawBody: string): ParsedEvent {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new WebhookPayloadError('body is not JSON');
  }
  if (!isObject(json)) throw new WebhookPayloadError('body is not a JSON object');
  let key = bodyKey(rawBody);
  let body = json;
  if (isObject(json.data) && typeof json.webhookUrl !== 'undefined' && typeof json.createdAt === 'string' && text(json._id) !== null) {
    key = `event:${text(json._id)}`;
    body = json.data;
  }
  const eventType = eventTypeOf(body) ?? (isObject(body.data) ? eventTypeOf(body.data) : null);
  if (!eventType) throw new WebhookPayloadError('body has no eventType (nor event_type)');
  const family = eventType.split('#')[0] ?? eventType;
  // Brokerage load events: `{ eventType, data: { changedValues, _id, reference_number } }`.
  const payload = family !== 'invoice' && isObject(body.data) && !('changedValues' in body) ? body.data : body;
  return { key, eventType, family, referenceNumber: referenceOf(family, payload), payload };
}

/** `eventType` (spec), or `event_type` as some senders have been reported to spell it. */
export function eventTypeOf(body: Record<string, unknown>): string | null {
  return text(body.eventType) ?? text(body.event_type);
}

/** The load reference number an event is about (invoices: the first entry's load reference). */
function referenceOf(family: string, payload: Record<string, unknown>): string | null {
  const direct = text(payload.reference_number);
  if (direct) return direct;
  if (family === 'invoice' && isObject(payload.data)) {
    const invoice = payload.data;
    const entries = Array.isArray(invoice.invoice) ? invoice.invoice : [];
    for (const entry of entries) if (isObject(entry) && text(entry.load_reference_number)) return text(entry.load_reference_number);
    if (isObject(invoice.loadDetails)) return text(invoice.loadDetails.reference_number);
  }
  return null;
}

/** Every load reference an invoice event covers (an invoice may span several loads). */
export function invoiceLoadReferences(payload: Record<string, unknown>): string[] {
  const refs = new Set<string>();
  const direct = text(payload.reference_number);
  if (direct) refs.add(direct);
  if (isObject(payload.data) && Array.isArray(payload.data.invoice)) {
    for (const entry of payload.data.invoice) if (isObject(entry) && text(entry.load_reference_number)) refs.add(text(entry.load_reference_number)!);
  }
  return [...refs];
}
