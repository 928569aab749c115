import type { ApiClient } from '../api/api-client.js';
import { ensureServerClock } from '../api/ensure-server-clock.js';
import type { RunPlan } from './stream-definition.js';

/** Re-exported: the strategies import it from here with the rest of the window plan. */
export { ensureServerClock };
import { iso, toMs } from './time.js';

/**
 * The range a run covers. Its end comes from the SERVER's clock minus the safety lag (design
 * §2.3): records stamped a moment ago may not be visible yet, and the local clock may be off.
 * Its start overlaps the last completed range by the lookback; the overlap is deduplicated by
 * content hash, so it costs requests but never duplicates.
 */
export function runRange(plan: RunPlan, highWater: string | null | undefined, client: ApiClient): { from: string; to: string } {
  const serverNow = client.clock.now().getTime();
  const latestSafe = serverNow - plan.safetyLagMs;
  if (plan.mode === 'backfill') {
    // A rerun of a finished (or partly finished) backfill continues from where it got to.
    const from = Math.max(toMs(plan.from ?? plan.initialFrom) ?? 0, toMs(highWater ?? null) ?? -Infinity);
    const to = Math.min(toMs(plan.to ?? null) ?? latestSafe, latestSafe);
    return { from: iso(from), to: iso(Math.max(from, to)) };
  }
  const initial = toMs(plan.initialFrom) ?? 0;
  const high = toMs(highWater ?? null);
  const from = high === null ? initial : Math.max(initial, high - plan.lookbackMs);
  // Never before the checkpoint: another replica's clock estimate (a lower bound, lower still when
  // its first answers were read late) put it there, and a range ending earlier would move the
  // checkpoint back (found by the cluster chaos run). The lookback is re-read either way.
  return { from: iso(from), to: iso(Math.max(from, latestSafe, high ?? from)) };
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
  return plan.mode === 'backfill' ? plan : { ...plan, lookbackMs: 0 };
}

/** What a window strategy's cursor holds (closed windows, token windows). */
export interface WindowState {
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
  const range = runRange(plan, state.highWater, client);
  if (range.from >= range.to) return undefined;
  const minSpan = Math.max(1, plan.minWindowMs);
  const maxSpan = Math.max(minSpan, plan.maxWindowMs);
  const span = Math.min(maxSpan, Math.max(minSpan, state.spanMs ?? maxSpan));
  return { ...state, spanMs: span, window: { from: range.from, to: iso(Math.min(toMs(range.from)! + span, toMs(range.to)!)), rangeEnd: range.to } };
}
