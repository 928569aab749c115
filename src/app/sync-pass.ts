import type { StreamRunSummary, StreamProgress } from '../sync/stream-runner.js';
import { runStream } from '../sync/stream-runner.js';
import type { AppContext } from './compose.js';
import { backfillPlan, incrementalPlan } from './stream-settings.js';

export interface PassOptions {
  command: string;
  signal: AbortSignal;
  stopSignal?: AbortSignal;
  /** Backfill bounds; absent for an incremental pass. */
  backfill?: { from: string; to: string };
  onProgress?: (progress: StreamProgress) => void;
}

/**
 * One pass over every selected stream, in order (loads first: they feed invoice gap-fill). A
 * failing stream does not stop the others; a stop request ends the pass after the current batch.
 */
export async function runPass(app: AppContext, options: PassOptions): Promise<StreamRunSummary[]> {
  const summaries: StreamRunSummary[] = [];
  for (const stream of app.streams) {
    if (options.stopSignal?.aborted || options.signal.aborted) break;
    if (stream.definition.pushOnly) continue;
    const plan = options.backfill ? backfillPlan(stream, options.backfill.from, options.backfill.to) : incrementalPlan(stream);
    const summary = await runStream(app.deps, {
      definition: stream.definition,
      sinks: app.sinksFor(stream),
      pageSize: stream.pageSize,
      options: stream.options,
      plan,
      command: options.command,
      signal: options.signal,
      stopSignal: options.stopSignal,
      onProgress: options.onProgress,
    });
    summaries.push(summary);
  }
  return summaries;
}
