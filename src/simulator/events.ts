import type { ServerClock } from './clock.js';

/** One entry of the webhook event log (§6.2). */
export interface EventRecord {
  _id: number;
  eventType: string;
  webhookUrl: string | null;
  data: Record<string, unknown>;
  /** `data` (the body sent, as a string) is produced on the way out; see presentEvent. */
  response: { statusCode: number | null };
  createdAt: string;
  updatedAt: string;
  __v: number;
  /** Simulator-only timing, never listed nor sent (§6.2 has no such field); see `EventTiming`. */
  timing: EventTiming;
}

/**
 * When the change behind an event happened and when its delivery was made, on the server clock.
 * The API's event record (§6.2) and delivered payload (§6.4) carry neither: `createdAt` is when
 * the event was created, which can trail the change (a tie group of loads shares one change time,
 * and their events are created one after another) and precedes the delivery (the sender delivers
 * one event at a time). Benchmarks read these through `SimulatorHandle.eventTimings()` or
 * `GET /__admin/event-timings` to measure change → sink and receipt → sink latency.
 */
export interface EventTiming {
  /** The changed record's new `updatedAt` (when the change happened). */
  changedAt: string;
  /** When the POST that the receiver answered 200 was sent; null while not delivered. */
  sentAt: string | null;
  /** When that 200 came back. */
  answeredAt: string | null;
}

/**
 * The §6.2 shape, with `response.data` holding the body that was (or would be) sent. Built on demand
 * because keeping a serialised copy of every payload doubled the memory of a long mutator run.
 */
export function presentEvent(record: EventRecord): Record<string, unknown> {
  const { timing: _simulatorOnly, ...listed } = record;
  return { ...listed, response: { statusCode: record.response.statusCode, data: JSON.stringify(record.data) } };
}

export type EventListener = (record: EventRecord) => void;

/**
 * Every change the simulator makes (API or mutator) lands here, whether or not webhooks are
 * configured, so `GET /webhook/` can be used to reconcile missed deliveries.
 */
export class EventLog {
  readonly records: EventRecord[] = [];
  private nextId = 1;
  private readonly byId = new Map<number, EventRecord>();
  listener: EventListener | null = null;

  constructor(private readonly clock: ServerClock) {}

  /** `changedAt`: the changed record's new updatedAt (default: now, for changes without one). */
  emit(eventType: string, payload: Record<string, unknown>, webhookUrl: string | null, changedAt?: string): EventRecord {
    const now = this.clock.iso();
    const record: EventRecord = {
      _id: this.nextId++,
      eventType,
      webhookUrl,
      data: payload,
      response: { statusCode: null },
      createdAt: now,
      updatedAt: now,
      __v: 0,
      timing: { changedAt: changedAt ?? now, sentAt: null, answeredAt: null },
    };
    this.records.push(record);
    this.byId.set(record._id, record);
    this.listener?.(record);
    return record;
  }

  /** The server clock (ISO), for the sender's delivery timing. */
  now(): string {
    return this.clock.iso();
  }

  get(id: number): EventRecord | undefined {
    return this.byId.get(id);
  }

  touch(record: EventRecord, statusCode: number | null): void {
    record.response = { statusCode };
    record.updatedAt = this.clock.iso();
    record.__v += 1;
  }
}
