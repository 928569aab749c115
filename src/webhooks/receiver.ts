import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpsMetrics } from '../ops/metrics.js';
import { sendJson, type RouteHandler } from '../ops/http-servers.js';
import type { Logger } from '../util/logger.js';
import type { AcceptOutcome, InboxEntry, WebhookInboxStore } from '../state/stores/webhook-inbox-store.js';
import { GroupCommitter } from './group-commit.js';
import { isBodyTooLargeError, readRawBody } from './read-body.js';
import { verifySignature } from './signature.js';
import { isWebhookPayloadError, parseEvent } from './webhook-event.js';

export interface ReceiverOptions {
  secret: string;
  maxBodyBytes: number;
  dedupeWindowMs: number;
  /** Deliveries are committed in groups (`acceptMany`, one transaction per group; `accept` for a group of one). */
  inbox: Pick<WebhookInboxStore, 'accept' | 'acceptMany'>;
  metrics: OpsMetrics;
  logger: Logger;
  /** Server time (the API client's clock, or the holder's note of it: receipt-clock.ts), so stored times compare with the event log's. */
  now: () => Date | Promise<Date>;
  /** Called after a new event is stored (with its receipt time, server clock), to wake the processor. */
  onStored: (receivedAt: Date) => void;
  /** False while stopping: deliveries get 503 so the sender retries later. */
  accepting: () => boolean;
}

/**
 * `POST <webhooks.path>` (spec §6.1): verify the signature over the raw body, store the event
 * durably, answer 200 at once; processing happens later in the processor. Nothing is stored
 * unless the signature is valid. Errors after a valid signature answer 5xx so the sender retries.
 * Deliveries that arrive together are committed together (group commit: one transaction instead
 * of one per delivery, which is what bounded a burst's receipt); each is still answered 200 only
 * after the transaction holding it committed, and 503 when that transaction failed.
 */
export function createReceiver(options: ReceiverOptions): RouteHandler {
  const { metrics, logger } = options;
  const { inbox, dedupeWindowMs } = options;
  // A delivery alone (a sender posting one at a time) is one autocommit INSERT, no BEGIN/COMMIT.
  const commits = new GroupCommitter<InboxEntry, AcceptOutcome>(async (entries) =>
    entries.length === 1 ? [await inbox.accept(entries[0]!, dedupeWindowMs)] : inbox.acceptMany(entries, dedupeWindowMs),
  );
  const refuse = (res: ServerResponse, status: number, reason: string, headers: Record<string, string> = {}) => {
    metrics.webhooksRefused.inc({ reason });
    sendJson(res, status, { error: reason }, headers);
  };
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      req.resume();
      return refuse(res, 405, 'method', { Allow: 'POST' });
    }
    if (!options.accepting()) {
      req.resume();
      return refuse(res, 503, 'unavailable', { 'Retry-After': '5' });
    }
    let raw: Buffer;
    try {
      raw = await readRawBody(req, options.maxBodyBytes);
    } catch (error) {
      if (isBodyTooLargeError(error)) return refuse(res, 413, 'too_large', { Connection: 'close' });
      throw error;
    }
    const verdict = verifySignature(options.secret, raw, req.headers['x-hub-signature']);
    if (verdict !== 'valid') {
      // Logged at warn without the header value: a probe or a misconfigured secret, worth seeing.
      logger.warn({ verdict, remote: req.socket.remoteAddress, bytes: raw.length }, 'webhook refused: bad signature');
      return refuse(res, 401, `signature_${verdict}`);
    }
    const body = raw.toString('utf8');
    let event;
    try {
      event = parseEvent(body);
    } catch (error) {
      if (!isWebhookPayloadError(error)) throw error;
      logger.warn({ problem: error.message, bytes: raw.length }, 'webhook refused: unusable payload');
      // 400: a signed body we cannot read will not become readable by resending it.
      return refuse(res, 400, 'bad_payload');
    }
    let outcome;
    const receivedAt = await options.now();
    try {
      outcome = await commits.submit({
        key: event.key,
        eventType: event.eventType,
        family: event.family,
        referenceNumber: event.referenceNumber,
        body,
        source: 'delivery',
        occurredAt: null,
        receivedAt: receivedAt.toISOString(),
      });
    } catch (error) {
      logger.error({ err: error, eventType: event.eventType }, 'webhook could not be stored; answering 503 so the sender retries');
      return refuse(res, 503, 'unavailable', { 'Retry-After': '5' });
    }
    metrics.webhooksAccepted.inc({ outcome });
    sendJson(res, 200, { ok: true, outcome });
    logger.debug({ eventType: event.eventType, reference: event.referenceNumber, outcome }, 'webhook accepted');
    // A duplicate may have armed a pending row again whose refresh is in flight: the processor
    // then takes it again once that batch settles, rather than at its next idle poll.
    options.onStored(receivedAt);
  };
}
