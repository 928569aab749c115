/** Timestamps inside the engine are epoch milliseconds; on the wire and in cursors, ISO 8601 UTC. */
export function toMs(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export const DAY_MS = 86_400_000;

/** The UTC day (`YYYY-MM-DD`) an instant falls on: the unit of the brokerage date filters. */
export function utcDay(ms: number): string {
  return iso(ms).slice(0, 10);
}

/** The UTC day `n` days after `day` (`YYYY-MM-DD`). */
export function addDays(day: string, n: number): string {
  return utcDay(Date.parse(`${day}T00:00:00.000Z`) + n * DAY_MS);
}

/** The first instant (ms) of a UTC day. */
export function dayStartMs(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

/**
 * The later of a cursor's previous high-water mark and a new one. A pass re-reads the lookback
 * behind the mark window by window; the mark it stores after each of those windows must not fall
 * behind what earlier passes read (`status` and an operator would see the checkpoint go back).
 */
export function laterMark(previous: string | null, next: string): string {
  const before = toMs(previous);
  return before !== null && before > toMs(next)! ? previous! : next;
}
