/** Timestamps inside the engine are epoch milliseconds; on the wire and in cursors, ISO 8601 UTC. */
export function toMs(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
