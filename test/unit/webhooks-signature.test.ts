import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/webhooks/signature.js';
import { bodyKey, parseEvent } from '../../src/webhooks/webhook-event.js';

const secret = 'unit-secret-123';
const raw = Buffer.from('{"eventType":"load#status_updated","reference_number":"M1"}');
const hex = createHmac('sha1', secret).update(raw).digest('hex');

describe('verifySignature', () => {
  it('accepts sha1= and sha= prefixes, case-insensitive hex', () => {
    expect(verifySignature(secret, raw, `sha1=${hex}`)).toBe('valid');
    expect(verifySignature(secret, raw, `sha=${hex}`)).toBe('valid');
    expect(verifySignature(secret, raw, `SHA1=${hex.toUpperCase()}`)).toBe('valid');
  });
  it('refuses missing, malformed and mismatching values', () => {
    expect(verifySignature(secret, raw, undefined)).toBe('missing');
    expect(verifySignature(secret, raw, '')).toBe('missing');
    expect(verifySignature(secret, raw, hex)).toBe('malformed');
    expect(verifySignature(secret, raw, `sha256=${hex}`)).toBe('malformed');
    expect(verifySignature(secret, raw, `sha1=${hex.slice(2)}`)).toBe('malformed');
    expect(verifySignature(secret, raw, [`sha1=${hex}`, `sha1=${hex}`])).toBe('malformed');
    expect(verifySignature('other', raw, `sha1=${hex}`)).toBe('mismatch');
    expect(verifySignature(secret, Buffer.concat([raw, Buffer.from(' ')]), `sha1=${hex}`)).toBe('mismatch');
  });
});

describe('parseEvent', () => {
  it('reads main load events keyed by body (their _id is the load id, not an event id)', () => {
    const body = JSON.stringify({ changedValues: { status: 'X' }, _id: 'load-1', reference_number: 'M1', eventType: 'load#status_updated' });
    expect(parseEvent(body)).toMatchObject({ key: bodyKey(body), family: 'load', referenceNumber: 'M1' });
  });
  it('unwraps brokerage load events from data (§6.4)', () => {
    const body = JSON.stringify({ eventType: 'load#status_updated', data: { changedValues: { status: 'X' }, _id: 'l', reference_number: 'B7', eventType: 'load#status_updated' } });
    const event = parseEvent(body);
    expect(event.referenceNumber).toBe('B7');
    expect(event.payload).toHaveProperty('changedValues');
  });
  it('takes the load reference of invoice events from the invoice entries', () => {
    const body = JSON.stringify({ eventType: 'invoice#created', dbId: 'i1', changedValues: {}, data: { _id: 'i1', invoice: [{ load_reference_number: 'M9' }] } });
    expect(parseEvent(body)).toMatchObject({ family: 'invoice', referenceNumber: 'M9' });
  });
  it('keys event records (§6.2 shape) by their event id', () => {
    const body = JSON.stringify({ _id: 42, eventType: 'load#created', webhookUrl: null, createdAt: '2024-01-01T00:00:00Z', data: { eventType: 'load#created', reference_number: 'M2' } });
    expect(parseEvent(body)).toMatchObject({ key: 'event:42', referenceNumber: 'M2' });
  });
  it('accepts event_type like eventType, at the top and inside brokerage data', () => {
    expect(parseEvent(JSON.stringify({ event_type: 'load#status_updated', reference_number: 'M1', changedValues: {} }))).toMatchObject({ eventType: 'load#status_updated', family: 'load', referenceNumber: 'M1' });
    expect(parseEvent(JSON.stringify({ data: { event_type: 'load#status_updated', reference_number: 'B1', changedValues: {} } }))).toMatchObject({ eventType: 'load#status_updated', referenceNumber: 'B1' });
  });
  it('refuses bodies without an eventType', () => {
    expect(() => parseEvent('{"a":1}')).toThrow(/eventType/);
    expect(() => parseEvent('[1]')).toThrow(/object/);
    expect(() => parseEvent('nope')).toThrow(/JSON/);
  });
});
