/**
 * Tracks the server's clock from the HTTP `Date` header (spec: window ends must come from the
 * server's clock, design §2.3). `Date` has one-second resolution and is stamped while the server
 * builds the answer, so each response gives a lower bound of the offset (server − local):
 * `Date − localReceiveTime`. The tracker keeps the recent lower bounds and uses their maximum,
 * which never runs ahead of the server: a window end computed from it is never in the future.
 */
const SAMPLE_LIMIT = 32;

export class ServerClock {
  private samples: number[] = [];
  private lastSampleAt: number | undefined;

  constructor(private readonly localNow: () => number = Date.now) {}

  /** Feed a response's `Date` header and the local time it was received. */
  observe(dateHeader: string | undefined | null, receivedAtLocalMs: number = this.localNow()): void {
    if (!dateHeader) return;
    const serverMs = Date.parse(dateHeader);
    if (Number.isNaN(serverMs)) return;
    this.samples.push(serverMs - receivedAtLocalMs);
    if (this.samples.length > SAMPLE_LIMIT) this.samples.shift();
    this.lastSampleAt = receivedAtLocalMs;
  }

  /** True once at least one `Date` header was seen. */
  get known(): boolean {
    return this.samples.length > 0;
  }

  /** Server minus local clock in milliseconds (a conservative estimate; 0 before any answer). */
  get offsetMs(): number {
    if (this.samples.length === 0) return 0;
    return Math.max(...this.samples);
  }

  /** The server's current time, never ahead of it. */
  now(): Date {
    return new Date(this.localNow() + this.offsetMs);
  }

  get lastObservedAt(): Date | undefined {
    return this.lastSampleAt === undefined ? undefined : new Date(this.lastSampleAt);
  }
}
