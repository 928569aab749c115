import { createHash, randomUUID } from 'node:crypto';

const HASH_LENGTH = 16;
const HASHED_SUFFIX = new RegExp(`-[0-9a-f]{${HASH_LENGTH}}$`);

/**
 * A file-name component that is safe whatever the input: only `[A-Za-z0-9._-]`, never `..`, never
 * a leading dot (hidden and temp files start with one), never a path separator, at most `maxLength`
 * characters (table names 60, batch ids 80, so every name incl. temp prefix and marker suffix stays
 * well under the 255-byte limit of common file systems). When the text had to change (or was too long) a hash of the original is appended, so
 * two different inputs never map to the same name; an input that already looks like a hashed name
 * gets hashed too, so it cannot impersonate one; so does one ending in `.errors` (it could
 * otherwise name a data file identical to another batch's errors file).
 */
export function safeFileComponent(text: string, maxLength = 80): string {
  let safe = text.replace(/[^A-Za-z0-9._-]/g, '_').replace(/\.{2,}/g, '_').replace(/^\./, '_');
  const unchanged = safe === text && safe.length > 0 && safe.length <= maxLength && !HASHED_SUFFIX.test(safe) && !/\.errors$/i.test(safe);
  if (unchanged) return safe;
  const hash = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_LENGTH);
  safe = safe.slice(0, maxLength - HASH_LENGTH - 1).replace(/\.+$/, '');
  return `${safe}-${hash}`;
}

/** `<table>__<batchId>.csv`: deterministic, so a replayed batch replaces its file. */
export function dataFileName(table: string, batchId: string): string {
  return `${safeFileComponent(table, 60)}__${safeFileComponent(batchId)}.csv`;
}

export function errorsFileName(table: string, batchId: string): string {
  return `${safeFileComponent(table, 60)}__${safeFileComponent(batchId)}.errors.csv`;
}

export const TEMP_PREFIX = '.tmp-';

/**
 * `.tmp-<name>-<random>`: in the final directory (so the rename is atomic), hidden (consumers
 * that ignore dot files never pick it up), and unique per attempt (two writers never share one).
 * The random part is 12 hex digits (48 random bits): the last group of a random UUID, which Node
 * takes from a pool of random bytes it fills in bulk — `randomBytes(6)` asked OpenSSL on every
 * call, 20–60 µs each, once for every staged page.
 */
export function tempFileName(name: string): string {
  return `${TEMP_PREFIX}${name}-${randomUUID().slice(-12)}`;
}
export const DONE_SUFFIX = '.done';
export const MANIFEST_SUFFIX = '.manifest.json';

/** Data and error files this connector writes (never temp files or markers). */
export function isOutputFile(name: string): boolean {
  return !name.startsWith('.') && name.includes('__') && name.endsWith('.csv');
}

/**
 * A published batch: `<UTC time>-<seq>` such as `20261122T203816Z-000042`. Names sort in
 * publishing order (the time never goes back below the last batch's, the sequence grows), so a
 * consumer applies batches in name order.
 */
const BATCH = /^(\d{8}T\d{6}Z)-(\d{6,})$/;
const BATCH_FILE = /^(\d{8}T\d{6}Z-\d{6,})(?:-(.+)\.csv|\.manifest\.json|\.done)$/;
export const BATCH_MANIFEST_SUFFIX = '.manifest.json';
export const BATCH_DONE_SUFFIX = '.done';
/** Hidden folder inside the drop where pages are staged until their batch is published. */
export const STAGING_DIR = '.staging';

/** `20261122T203816Z`: UTC to the second, sortable as text, no `:` (not allowed in Windows file names). */
export function utcStamp(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

export function batchName(stamp: string, seq: number): string {
  return `${stamp}-${String(seq).padStart(6, '0')}`;
}

export function parseBatchName(name: string): { stamp: string; seq: number } | undefined {
  const match = BATCH.exec(name);
  return match ? { stamp: match[1]!, seq: Number(match[2]) } : undefined;
}

/** `<batch>-<table>.csv`: one file per table per batch. */
export function batchDataFileName(batch: string, table: string): string {
  return `${batch}-${safeFileComponent(table, 60)}.csv`;
}

/** The batch a drop file belongs to, and the table when it is a data file; undefined for other files. */
export function batchFileOf(name: string): { batch: string; table?: string } | undefined {
  const match = BATCH_FILE.exec(name);
  if (!match) return undefined;
  return match[2] === undefined ? { batch: match[1]! } : { batch: match[1]!, table: match[2] };
}
