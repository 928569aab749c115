import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/util/logger.js';
import { eventLogEntry } from '../../src/webhooks/catch-up.js';
import { bodyKey } from '../../src/webhooks/webhook-event.js';

const RECEIVED = '2026-11-26T12:00:00.000Z';
const payload = { eventType: 'load#status_updated', reference_number: 'L-1001', _id: 'load-1', changedValues: { status: 'DISPATCHED' } };

/** An event record as the log lists it (§6.2), with what it says in `response.data`. */
const record = (responseData: unknown, data: unknown = payload) => ({
  _id: 'ev-1',
  eventType: payload.eventType,
  webhookUrl: 'https://erp.example/hooks',
  data,
  response: { statusCode: 503, data: responseData },
  createdAt: '2026-11-26T11:59:00.000Z',
});

describe('an event-log record as an inbox entry (webhook catch-up)', () => {
  it('keys it by response.data, the body that was sent, so a delivery that arrived is a duplicate', () => {
    const sent = JSON.stringify({ ...payload, extra: 1 });
    const entry = eventLogEntry(record(sent), RECEIVED, silentLogger());
    expect(entry).toMatchObject({ key: bodyKey(sent), body: sent, eventType: 'load#status_updated', referenceNumber: 'L-1001', source: 'log', occurredAt: '2026-11-26T11:59:00.000Z' });
  });

  it.each([
    ['a 503 answer in JSON', '{"error":"state store unreachable","retry":true}'],
    ['a plain-text answer', 'Service Unavailable'],
  ])('falls back to the record\'s data when response.data is the receiver\'s answer (%s), never skipping the event', (_name, answer) => {
    const entry = eventLogEntry(record(answer), RECEIVED, silentLogger());
    expect(entry).toMatchObject({ key: bodyKey(JSON.stringify(payload)), body: JSON.stringify(payload), eventType: 'load#status_updated', referenceNumber: 'L-1001' });
  });

  it('uses the record\'s data when response.data is missing or empty', () => {
    expect(eventLogEntry(record(''), RECEIVED, silentLogger())?.body).toBe(JSON.stringify(payload));
    expect(eventLogEntry(record(undefined), RECEIVED, silentLogger())?.body).toBe(JSON.stringify(payload));
  });

  it('skips a record with no event anywhere (logged, not thrown)', () => {
    expect(eventLogEntry(record('oops', { nothing: true }), RECEIVED, silentLogger())).toBeNull();
  });
});
