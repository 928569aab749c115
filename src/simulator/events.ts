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
}

/**
 * The §6.2 shape, with `response.data` holding the body that was (or would be) sent. Built on demand
 * because keeping a serialised copy of every payload doubled the memory of a long mutator run.
 */
export function presentEvent(record: EventRecord): Record<string, unknown> {
  return { ...record, response: { statusCode: record.response.statusCode, data: JSON.stringify(record.data) } };
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

  emit(eventType: string, payload: Record<string, unknown>, webhookUrl: string | null): EventRecord {
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
    };
    this.records.push(record);
    this.byId.set(record._id, record);
    this.listener?.(record);
    return record;
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
