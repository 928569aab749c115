/**
 * The one text form of a stored or mapped value that `freight-sync reconcile` compares (sinks
 * read back through it, mapped API records go through it): null and '' are "empty" (a CSV cannot
 * tell them apart), booleans `true`/`false`, numbers and bigints as their digits, dates as ISO
 * 8601 UTC, buffers as UTF-8, objects as JSON. Lives in util because connectors use it too.
 */
export function cellText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return cellText(value.toString('utf8'));
  return JSON.stringify(value);
}
