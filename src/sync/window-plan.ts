import { z } from 'zod';
import type { ApiClient } from '../api/api-client.js';
import { ensureServerClock } from '../api/ensure-server-clock.js';
import type { RunPlan } from './stream-definition.js';

/** Re-exported: the strategies import it from here with the rest of the window plan. */
export { ensureServerClock };
import { iso, toMs } from './time.js';

/** What a range start depends on in a strategy's cursor. */
export interface CoverCursor {
  /** End of the last completed range (ISO). */
  highWater: string | null;
  /** The checkpoint was reached by ranges read with the safety lag's cover (RunPlan.lagCover). */
  lagCover?: true | undefined;
}

/** The cursor's record of the cover its checkpoint was reached with, carried into each new cursor. */
export function keepCover(cursor: { lagCover?: true | undefined }): { lagCover?: true } {
  return cursor.lagCover ? { lagCover: true } : {};
}

/** The cursor field recording it (strategies' cursor schemas). */
export const lagCoverField = z.literal(true).optional();

/** The range of a run; `lagCover` is what the cursor records once the range is read. */
export interface RunRange {
  from: string;
  to: string;
  lagCover?: true;
}

/**
 * The range a run covers. Its end comes from the SERVER's clock minus the safety lag (design
 * §2.3): records stamped a moment ago may not be visible yet, and the local clock may be off.
 * Its start overlaps the last completed range by the lookback; the overlap is deduplicated by
 * content hash, so it costs requests but never duplicates.
 *
 * With `plan.lagCover` the lookback's cover of late writes comes from the lag instead: the range
 * ends `lookbackMs` earlier than the safety lag alone would end it, so a write up to that late
 * is already visible when its time is read, and the next range starts at the checkpoint — each
 * record is read once. That holds only for a checkpoint reached that way (`cursor.lagCover`): one
 * reached with the lookback's cover (before the setting changed) read its last `lookbackMs`
 * too early for the lag's cover, so those are read again — until a range ends at or past the old
 * checkpoint, which is then covered.
 */
export function runRange(plan: RunPlan, cursor: CoverCursor, client: ApiClient): RunRange {
  const serverNow = client.clock.now().getTime();
  const highWater = cursor.highWater;
  // A first run (no checkpoint) reads up to the safety lag alone, as under the lookback's cover:
  // it delivers everything there is, and the next ranges re-read its last `lookback` until they
  // reach past it (below) — a first sync does not hold the last minutes back.
  const lagged = plan.lagCover === true && plan.mode !== 'backfill' && highWater !== null;
  const latestSafe = serverNow - plan.safetyLagMs - (lagged ? plan.lookbackMs : 0);
  if (plan.mode === 'backfill') {
    // A rerun of a finished (or partly finished) backfill continues from where it got to.
    const from = Math.max(toMs(plan.from ?? plan.initialFrom) ?? 0, toMs(highWater ?? null) ?? -Infinity);
    const to = Math.min(toMs(plan.to ?? null) ?? latestSafe, latestSafe);
    return { from: iso(from), to: iso(Math.max(from, to)) };
  }
  const initial = toMs(plan.initialFrom) ?? 0;
  const high = toMs(highWater ?? null);
  const covered = lagged && cursor.lagCover === true;
  const lookback = covered ? 0 : plan.lookbackMs;
  const from = high === null ? initial : Math.max(initial, high - lookback);
  // Never before the checkpoint: another replica's clock estimate (a lower bound, lower still when
  // its first answers were read late) put it there, and a range ending earlier would move the
  // checkpoint back (found by the cluster chaos run). The lookback is re-read either way.
  const to = Math.max(from, latestSafe, high ?? from);
  const lagCover = lagged && (covered || latestSafe >= high!);
  return { from: iso(from), to: iso(to), ...(lagCover ? { lagCover: true as const } : {}) };
}

/**
 * The plan of an append-only log windowed on its creation time (the webhook event log, the audit
 * logs): incremental passes without the lookback. The lookback re-reads the last minutes of a
 * stream for records that became visible late with a time already behind the checkpoint. A log
 * entry's createdAt is stamped by the server when it is logged and never changes, windows start
 * AT the checkpoint (inclusive bounds, so ties at the boundary are read), and the safety lag
 * already waits for late visibility — exactly as for the records of the last seconds before it.
 * With a five-minute schedule and the default PT10M, the lookback read every entry three times
 * (issue 14: the event log cost 5 requests a pass where 2 would do; the audit logs 3x their
 * minimum at 20,000 loads). A backfill keeps its own bounds.
 */
export function incrementalWithoutLookback(plan: RunPlan): RunPlan {
  // Nor the lag's cover (lagCover), which is the lookback moved into the lag.
  return plan.mode === 'backfill' ? plan : { ...plan, lookbackMs: 0, lagCover: false };
}

/** What a window strategy's cursor holds (closed windows, token windows). */
export interface WindowState extends CoverCursor {
  highWater: string | null;
  spanMs: number | null;
  window: { from: string; to: string; rangeEnd: string } | null;
}

/**
 * Starts the next range of a window strategy when none is in progress: the range from the
 * checkpoint (minus lookback) to the server clock (minus safety lag), and its first window of
 * the remembered adaptive length. Returns undefined when there is nothing to read yet.
 */
export async function openFirstWindow<T extends WindowState>(
  state: T,
  plan: RunPlan,
  client: ApiClient,
  signal: AbortSignal,
): Promise<T | undefined> {
  if (state.window) return state;
  await ensureServerClock(client, signal);
  const range = runRange(plan, state, client);
  if (range.from >= range.to) return undefined;
  const minSpan = Math.max(1, plan.minWindowMs);
  const maxSpan = Math.max(minSpan, plan.maxWindowMs);
  const span = Math.min(maxSpan, Math.max(minSpan, state.spanMs ?? maxSpan));
  // The range's cover is recorded as it opens: the cursor keeps it through the range, and it is
  // read only when the next range opens.
  const { lagCover: _previous, ...rest } = state;
  return {
    ...(rest as T),
    ...(range.lagCover ? { lagCover: true } : {}),
    spanMs: span,
    window: { from: range.from, to: iso(Math.min(toMs(range.from)! + span, toMs(range.to)!)), rangeEnd: range.to },
  };
}
