import { z } from 'zod';
import type { ApiClient } from '../api/api-client.js';
import { listWebhookEvents } from '../api/endpoints/webhook-events.js';
import { ensureServerClock } from '../api/ensure-server-clock.js';
import type { CheckpointStore } from '../state/stores/checkpoint-store.js';
import type { Logger } from '../util/logger.js';
import type { OpsMetrics } from '../ops/metrics.js';
import type { InboxEntry, WebhookInboxStore } from '../state/stores/webhook-inbox-store.js';
import { bodyKey, isWebhookPayloadError, parseEvent } from './webhook-event.js';

/** Checkpoint key of the catch-up: the event-log time up to which nothing can be missing. */
export const CATCH_UP_KEY = 'webhooks:catch-up';
const catchUpCursor = z.strictObject({ readUpTo: z.string() });
/**
 * Where a first start began, in the recording host's clock, while no catch-up has read the log
 * yet (the API could not be reached): converted to the server's clock by the offset once known.
 * A key of its own, so the position above only ever holds server times and never moves back.
 */
export const CATCH_UP_START_KEY = 'webhooks:catch-up-start';
const catchUpStart = z.strictObject({ hostTime: z.string() });
const PAGE = 50;

export interface CatchUpOptions {
  client: ApiClient;
  inbox: WebhookInboxStore;
  checkpoints: CheckpointStore;
  metrics: OpsMetrics;
  logger: Logger;
  overlapMs: number;
  maxAgeMs: number;
  dedupeWindowMs: number;
}

export interface CatchUpResult {
  from: string | null;
  to: string;
  read: number;
  stored: number;
}

/**
 * Fills the gap left while the receiver was down (spec §4.6): reads `GET /webhook/` from where the
 * last catch-up read up to (minus an overlap for clock error) to now, and
 * stores every event in the inbox like a delivery. The key is the digest of the body the log says
 * was sent (`response.data`), which equals the key of that delivery, so events that did arrive
 * are dropped as duplicates. A first start records its position before anything else: polling
 * covers the past, and the first catch-up that reaches the API reads from there.
 */
export async function catchUp(options: CatchUpOptions, signal: AbortSignal): Promise<CatchUpResult> {
  const { client, inbox, checkpoints } = options;
  let stored = await checkpoints.get(CATCH_UP_KEY, catchUpCursor);
  let firstStart = false;
  let hostStart: string | undefined;
  if (!stored) {
    // Recorded before the API is asked anything: if the API cannot be reached now (down, or the
    // account needs re-authentication) deliveries still flow into the inbox, and the sender may
    // give up on some of them meanwhile. The catch-up that finally runs must start here, not at
    // the newest delivery — cluster chaos: a bare-pair account waiting minutes for
    // re-authentication started its first catch-up at its newest delivery, stamped by a clock
    // 150 s ahead of the server's, and 6 given-up events were never read. A state from before the
    // catch-up kept a position starts at its newest inbox event, as before.
    hostStart = (await checkpoints.get(CATCH_UP_START_KEY, catchUpStart))?.hostTime;
    if (hostStart === undefined) {
      const newest = await inbox.lastEventTime();
      const hostNow = new Date().toISOString();
      hostStart = newest && Date.parse(newest) < Date.parse(hostNow) ? newest : hostNow;
      firstStart = newest === null;
      await checkpoints.set(CATCH_UP_START_KEY, { hostTime: hostStart }, catchUpStart);
    }
  }
  // `to` becomes the position "read up to": it must not be ahead of the server's own clock.
  await ensureServerClock(client, signal);
  const now = client.clock.now();
  const to = now.toISOString();
  if (firstStart) {
    // Nothing can have been missed yet: polling covers the past.
    await checkpoints.set(CATCH_UP_KEY, { readUpTo: to }, catchUpCursor);
    await checkpoints.delete(CATCH_UP_START_KEY);
    return { from: null, to, read: 0, stored: 0 };
  }
  // A start in the host's clock, in the server's: the offset known now (the overlap covers drift).
  stored ??= { readUpTo: new Date(Date.parse(hostStart!) + client.clock.offsetMs).toISOString() };
  // The log was read up to `readUpTo`: every event before it has been seen, delivered or not.
  // Deliveries since then say nothing about the events between (the sender gives up on one and
  // goes on with the next, and a backed-up sender delivers minutes late), so they never move the
  // start forward.
  const last = stored.readUpTo;
  const fromMs = Math.max(Date.parse(last) - options.overlapMs, now.getTime() - options.maxAgeMs);
  const from = new Date(fromMs).toISOString();
  let read = 0;
  let storedCount = 0;
  for (let skip = 0; ; skip += PAGE) {
    const page = await listWebhookEvents(
      client,
      client.variant === 'main' ? { occurred_from: from, occurred_to: to, skip, limit: PAGE, sortBy: { createdAt: 1 } } : { occurred_from: from, occurred_to: to },
      signal,
    );
    const entries: InboxEntry[] = [];
    for (const item of page.items as Array<Record<string, unknown>>) {
      const entry = eventLogEntry(item, to, options.logger);
      if (entry) entries.push(entry);
    }
    read += page.items.length;
    const outcomes = await inbox.acceptMany(entries, options.dedupeWindowMs);
    for (const outcome of outcomes) {
      options.metrics.webhookCatchUpEvents.inc({ outcome });
      if (outcome !== 'duplicate') storedCount += 1;
    }
    // Brokerage has no paging on this endpoint: one answer is the whole window.
    if (client.variant !== 'main' || page.items.length < PAGE) break;
    // Main pages oldest first: every event older than this page's last one has been stored, so
    // the position moves there now. A long read cut short (a lease lost, a shutdown) resumes from
    // it instead of starting over — under lease churn a read of minutes never finished and the
    // events the sender gave up on were never stored (cluster chaos run 18).
    const progress = progressOf(page.items as Array<Record<string, unknown>>);
    if (progress && (!stored || Date.parse(progress) > Date.parse(stored.readUpTo))) {
      await checkpoints.set(CATCH_UP_KEY, { readUpTo: progress }, catchUpCursor);
      stored = { readUpTo: progress };
    }
  }
  // Never backwards: a replica that took over before its clock learned the API's offset reads
  // up to an earlier `to` than the previous holder recorded (found by the cluster chaos run).
  await checkpoints.set(CATCH_UP_KEY, { readUpTo: latest(to, stored?.readUpTo ?? null) ?? to }, catchUpCursor);
  if (hostStart !== undefined) await checkpoints.delete(CATCH_UP_START_KEY);
  return { from, to, read, stored: storedCount };
}

/**
 * Just before the newest createdAt of a page read oldest first: events stamped with that very
 * millisecond may continue on the next page.
 */
function progressOf(items: Array<Record<string, unknown>>): string | undefined {
  let newest = Number.NEGATIVE_INFINITY;
  for (const item of items) {
    const at = typeof item.createdAt === 'string' ? Date.parse(item.createdAt) : Number.NaN;
    if (Number.isFinite(at) && at > newest) newest = at;
  }
  return Number.isFinite(newest) ? new Date(newest - 1).toISOString() : undefined;
}

function latest(a: string | null, b: string | null): string | null {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/**
 * An event-log record (§6.2) as an inbox entry, keyed like the delivery it stands for. The body is
 * `response.data`, the text the log says was sent, so the key equals the delivery's; when that is
 * not an event (a log that keeps the receiver's answer there instead — for the very deliveries
 * that failed, a 503's text), the record's own `data`, the delivered payload, stands in. Taking
 * the answer for the body would skip exactly the events the catch-up is for.
 */
export function eventLogEntry(record: Record<string, unknown>, receivedAt: string, logger: Logger): InboxEntry | null {
  const response = record.response as { data?: unknown } | undefined;
  const candidates: string[] = [];
  if (typeof response?.data === 'string' && response.data !== '') candidates.push(response.data);
  if (record.data !== undefined && record.data !== null) candidates.push(JSON.stringify(record.data));
  let problem = 'no body';
  for (const body of candidates) {
    try {
      const event = parseEvent(body);
      return {
        key: bodyKey(body),
        eventType: event.eventType,
        family: event.family,
        referenceNumber: event.referenceNumber,
        body,
        source: 'log',
        occurredAt: typeof record.createdAt === 'string' ? new Date(record.createdAt).toISOString() : null,
        receivedAt,
      };
    } catch (error) {
      if (!isWebhookPayloadError(error)) throw error;
      problem = error.message;
    }
  }
  logger.warn({ id: record._id, problem }, 'event log entry skipped: unusable payload');
  return null;
}
