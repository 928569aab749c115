/**
 * The time a stored cursor stands at (ISO), whatever strategy wrote it: the lower bound of the
 * window being read, else the high-water mark; snapshots report their last run. Mirrors the
 * runner's progress description; used for the checkpoint-lag metric.
 */
export function cursorPosition(cursor: unknown): string | null {
  if (!cursor || typeof cursor !== 'object') return null;
  const c = cursor as { window?: { lower?: string; from?: string } | null; highWater?: string | null; billing?: unknown; lastRunAt?: unknown };
  if (c.billing) return cursorPosition(c.billing);
  if (c.window?.lower) return c.window.lower;
  if (c.window?.from) return c.window.from;
  if (typeof c.highWater === 'string') return c.highWater;
  return typeof c.lastRunAt === 'string' ? c.lastRunAt : null;
}
