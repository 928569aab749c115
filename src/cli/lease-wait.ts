import { parseIsoDuration } from '../util/duration.js';
import { UsageError } from '../util/errors.js';

/** `--lease-wait` of `sync` and `backfill`: how long to wait for the account's lease (docs/scaling-out.md). */
export function parseLeaseWait(value: string): number {
  const ms = parseIsoDuration(value);
  if (ms === undefined) throw new UsageError(`--lease-wait: expected an ISO 8601 duration such as PT2M, got "${value}"`);
  return ms;
}
