/**
 * Reading a stored cursor without knowing which strategy wrote it (keyset, closed windows,
 * day windows — whose `window.from` is a UTC day —, token windows, invoices, snapshots): used by progress output, `status`, the checkpoint-lag
 * metric and backfill completion.
 */
interface AnyCursor {
  window?: { lower?: string; from?: string } | null;
  highWater?: string | null;
  billing?: unknown;
  lastRunAt?: unknown;
  mode?: unknown;
}

function asCursor(cursor: unknown): AnyCursor | undefined {
  return cursor && typeof cursor === 'object' ? (cursor as AnyCursor) : undefined;
}

/** The time the cursor stands at (ISO): inside the range being read, else the end of the last one. */
export function cursorPosition(cursor: unknown): string | null {
  const c = asCursor(cursor);
  if (!c) return null;
  if (c.billing) return cursorPosition(c.billing);
  if (c.window?.lower) return c.window.lower;
  if (c.window?.from) return c.window.from;
  if (typeof c.highWater === 'string') return c.highWater;
  return typeof c.lastRunAt === 'string' ? c.lastRunAt : null;
}

/** True while a range is being read (a run stopped, or is running, in the middle of it). */
export function cursorInProgress(cursor: unknown): boolean {
  const c = asCursor(cursor);
  if (!c) return false;
  if (c.billing) return cursorInProgress(c.billing);
  return !!c.window;
}

/** The end of the last completed range, or undefined while a range is still being read. */
export function cursorCompletedAt(cursor: unknown): string | undefined {
  const c = asCursor(cursor);
  if (!c) return undefined;
  if (c.billing) return cursorCompletedAt(c.billing);
  return c.window === null && c.highWater ? c.highWater : undefined;
}
