import type { Page } from '../../api/paging.js';
import { tokenPages } from '../../api/paging.js';
import type { Chunk, RawRecord, RunPlan, StreamEnv } from '../stream-definition.js';
import { iso, toMs } from '../time.js';
import { keepCover, openFirstWindow } from '../window-plan.js';
import { type WindowCursor } from './closed-window.js';

/**
 * Audit records (spec §4.4 `/audit/load`, §4.7 `/audit/customer`): append-only, filtered by
 * createdAt with BOTH bounds required, paged by `pageToken` (design §2.5). Windows on createdAt;
 * pages of a window are delivered as they come while the cursor stays on the window, and the
 * window is committed once its last page was delivered (a crash re-reads it; records are
 * deduplicated). Window length adapts to aim at a few pages per window.
 */
export interface TokenWindowSource {
  fetch(args: { from: string; to: string; pageToken: string | undefined; limit: number; signal: AbortSignal }): Promise<Page<RawRecord>>;
}

const TARGET_PAGES = 4;

export async function* readTokenWindows(
  source: TokenWindowSource,
  env: StreamEnv<unknown>,
  cursor: WindowCursor | undefined,
  plan: RunPlan,
  signal: AbortSignal,
): AsyncGenerator<Chunk<WindowCursor>> {
  let state: WindowCursor = cursor ?? { mode: 'window', highWater: null, spanMs: null, window: null };
  const minSpan = Math.max(1, plan.minWindowMs);
  const maxSpan = Math.max(minSpan, plan.maxWindowMs);
  const opened = await openFirstWindow(state, plan, env.client, signal);
  if (!opened) return;
  state = opened;
  for (;;) {
    const window = state.window!;
    let pageNo = 0;
    for await (const page of tokenPages((pageToken) => source.fetch({ from: window.from, to: window.to, pageToken, limit: env.pageSize, signal }), { signal })) {
      yield { records: page.items, cursor: state, batchId: `${window.from}_${window.to}_${pageNo}`, pages: 1, rejected: page.rejected };
      pageNo += 1;
    }
    const span = state.spanMs ?? maxSpan;
    const factor = Math.min(2, Math.max(0.5, TARGET_PAGES / Math.max(pageNo, 1)));
    const nextSpan = Math.min(maxSpan, Math.max(minSpan, Math.round(span * factor)));
    const done = toMs(window.to)! >= toMs(window.rangeEnd)!;
    const next: WindowCursor = done
      ? { mode: 'window', highWater: window.rangeEnd, ...keepCover(state), spanMs: nextSpan, window: null }
      : {
          mode: 'window',
          highWater: window.to,
          ...keepCover(state),
          spanMs: nextSpan,
          window: { from: window.to, to: iso(Math.min(toMs(window.to)! + nextSpan, toMs(window.rangeEnd)!)), rangeEnd: window.rangeEnd },
        };
    yield { records: [], cursor: next, batchId: `${window.from}_${window.to}_done`, pages: 0, rejected: [] };
    state = next;
    if (!state.window) return;
  }
}
