import cliProgress from 'cli-progress';
import type { StreamProgress } from '../sync/stream-runner.js';
import type { Logger } from '../util/logger.js';

/**
 * Backfill progress: a bar on a TTY (position within the time range), periodic log lines
 * otherwise (containers, CI, log files).
 */
export function createProgressReporter(range: { from: string; to: string }, logger: Logger, everyMs = 10_000): {
  onProgress: (p: StreamProgress) => void;
  stop: () => void;
} {
  const fromMs = Date.parse(range.from);
  const toMs = Date.parse(range.to);
  const fraction = (position: string | null) => {
    const at = position ? Date.parse(position) : NaN;
    if (Number.isNaN(at) || toMs <= fromMs) return 0;
    return Math.min(1, Math.max(0, (at - fromMs) / (toMs - fromMs)));
  };
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: '{stream} [{bar}] {percentage}% | {records} records | {pages} pages | at {position}', stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      onProgress(p) {
        const payload = { stream: p.stream.padEnd(16), records: p.records, pages: p.pages, position: p.position ?? '-' };
        if (!started) {
          bar.start(1000, 0, payload);
          started = true;
        }
        bar.update(Math.round(fraction(p.position) * 1000), payload);
      },
      stop: () => bar.stop(),
    };
  }
  let last = 0;
  return {
    onProgress(p) {
      const now = Date.now();
      if (now - last < everyMs) return;
      last = now;
      logger.info({ stream: p.stream, records: p.records, pages: p.pages, position: p.position, percent: Math.round(fraction(p.position) * 100) }, 'backfill progress');
    },
    stop: () => undefined,
  };
}
