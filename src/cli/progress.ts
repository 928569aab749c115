import cliProgress from 'cli-progress';
import type { StreamProgress, StreamRunSummary } from '../sync/stream-runner.js';
import type { Logger } from '../util/logger.js';

export interface ProgressOptions {
  /** Log-line interval when stderr is not a TTY. */
  everyMs?: number;
  /** The server's clock: a range ending in the future ends there (data cannot be newer). */
  now?: () => Date;
}

export interface ProgressReporter {
  onProgress: (p: StreamProgress) => void;
  /** The pass ended: streams that finished are at 100% (the data may end before --to). */
  finish: (summaries: readonly StreamRunSummary[]) => void;
  stop: () => void;
}

/** `12m 30s`, `45s`, `2h 05m`. */
export function formatEta(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Backfill progress per stream: position within the time range (capped at the server clock),
 * records per second and an ETA from the share of the range done so far. A bar on a TTY,
 * periodic log lines otherwise (containers, CI, log files).
 */
export function createProgressReporter(range: { from: string; to: string }, logger: Logger, options: ProgressOptions = {}): ProgressReporter {
  const fromMs = Date.parse(range.from);
  const endMs = () => Math.min(Date.parse(range.to), options.now?.().getTime() ?? Infinity);
  const fraction = (position: string | null) => {
    const at = position ? Date.parse(position) : NaN;
    const toMs = endMs();
    if (Number.isNaN(at) || toMs <= fromMs) return 0;
    return Math.min(1, Math.max(0, (at - fromMs) / (toMs - fromMs)));
  };
  const streamStarted = new Map<string, number>();
  const measure = (p: StreamProgress) => {
    const now = Date.now();
    if (!streamStarted.has(p.stream)) streamStarted.set(p.stream, now);
    const elapsedMs = Math.max(1, now - streamStarted.get(p.stream)!);
    const done = fraction(p.position);
    return {
      done,
      rate: Math.round((p.records * 1000) / elapsedMs),
      eta: done > 0 && done < 1 ? formatEta((elapsedMs * (1 - done)) / done) : done >= 1 ? '0s' : '?',
    };
  };

  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: '{stream} [{bar}] {percentage}% | {records} records | {rate}/s | ETA {eta} | at {position}', stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    let last: StreamProgress | undefined;
    return {
      onProgress(p) {
        const m = measure(p);
        // A new stream begins: the previous one got to the end of its data.
        if (last && last.stream !== p.stream) bar.update(1000);
        last = p;
        const payload = { stream: p.stream.padEnd(16), records: p.records, rate: m.rate, eta: m.eta, position: p.position ?? '-' };
        if (!started) {
          bar.start(1000, 0, payload);
          started = true;
        }
        bar.update(Math.round(m.done * 1000), payload);
      },
      finish(summaries) {
        if (started && last && summaries.find((s) => s.stream === last!.stream)?.status === 'ok') bar.update(1000, { eta: '0s' });
      },
      stop: () => bar.stop(),
    };
  }
  let lastLog = 0;
  return {
    onProgress(p) {
      const m = measure(p);
      const now = Date.now();
      if (now - lastLog < (options.everyMs ?? 10_000)) return;
      lastLog = now;
      logger.info({ stream: p.stream, records: p.records, pages: p.pages, position: p.position, percent: Math.round(m.done * 100), recordsPerSecond: m.rate, eta: m.eta }, 'backfill progress');
    },
    finish(summaries) {
      for (const s of summaries) {
        if (s.status === 'ok') logger.info({ stream: s.stream, records: s.delivered, percent: 100 }, 'backfill of stream finished');
      }
    },
    stop: () => undefined,
  };
}
