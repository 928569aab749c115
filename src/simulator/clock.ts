/**
 * The server clock: real time plus a configurable offset. Every timestamp the simulator writes and
 * the HTTP `Date` header come from here, so clients that trust their own clock drift out of step.
 *
 * Tests move it forward with `advance(ms)` instead of sleeping: changes made before the advance
 * look `ms` older to every reader (the `Date` header, record timestamps, token expiry, the event
 * log all read this one clock), so a client's window end (server time − safety lag) passes them at
 * once. Moving forward only keeps the simulator's timestamps non-decreasing, which its sorted
 * overlays rely on; to set an arbitrary skew, set `offsetMs` (`configure({ clockOffsetMs })`).
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

  /** Jumps the clock `ms` forward (a whole number ≥ 0); returns the new server time. */
  advance(ms: number): Date {
    if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`advance takes a whole number of milliseconds ≥ 0, got ${ms}`);
    this.offsetMs += ms;
    return this.now();
  }
}
