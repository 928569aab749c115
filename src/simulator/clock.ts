/**
 * The server clock: real time plus a configurable offset. Every timestamp the simulator writes and
 * the HTTP `Date` header come from here, so clients that trust their own clock drift out of step.
 */
export class ServerClock {
  constructor(public offsetMs: number) {}

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  iso(): string {
    return this.now().toISOString();
  }
}
