import cron, { type ScheduledTask } from 'node-cron';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import type { Logger } from '../util/logger.js';
import type { ReconcileReport } from './report.js';
import { countOf } from './report.js';

export interface ReconcileServiceOptions {
  /** Cron expression (UTC), `reconcile.schedule`. */
  readonly schedule: string;
  /** One reconcile (the composition root binds streams, sinks and budget). */
  readonly run: (signal: AbortSignal) => Promise<ReconcileReport>;
  /** Every finished report (metrics). */
  readonly onReport: (report: ReconcileReport) => void;
  readonly logger: Logger;
  /** Second SIGTERM: aborts a reconcile in progress. */
  readonly abortSignal: AbortSignal;
}

/**
 * `reconcile.schedule` in `run`: a reconcile on its cron ticks, never two at once (a tick that
 * finds one running is skipped). A failed reconcile is logged and tried at the next tick — it
 * reads only, so nothing waits on it — and its loops never die on their own. `stop` ends the ticks
 * and waits for a reconcile in progress (it stops at its next request when aborted).
 */
export function reconcileService(options: ReconcileServiceOptions): DaemonServiceLike {
  let task: ScheduledTask | undefined;
  let running: Promise<void> | undefined;
  let stopped!: () => void;
  const loops = new Promise<void>((resolve) => (stopped = resolve));
  const tick = () => {
    if (running) {
      options.logger.info('previous reconcile still running; tick skipped');
      return;
    }
    running = (async () => {
      try {
        const report = await options.run(options.abortSignal);
        options.onReport(report);
        const differences = report.results.reduce((n, r) => n + r.differences.length, 0);
        const summary = Object.fromEntries(report.results.map((r) => [`${r.stream}/${r.sink}`, { missing: countOf(r, 'missing'), stale: countOf(r, 'stale'), extra: countOf(r, 'extra'), unchecked: r.unchecked.length }]));
        const complete = report.coverage.every((c) => c.complete);
        options.logger[differences > 0 || !complete ? 'warn' : 'info']({ summary, requests: report.requests, complete }, `reconcile: ${differences} difference(s)${complete ? '' : ', part of the period unchecked'}`);
      } catch (error) {
        options.logger.error({ err: error }, 'reconcile failed; trying again at the next tick');
      } finally {
        running = undefined;
      }
    })();
  };
  return {
    name: 'reconcile',
    async start() {
      task = cron.schedule(options.schedule, tick, { name: 'reconcile', timezone: 'UTC' });
      return { loops };
    },
    async stop() {
      if (task) {
        await task.stop();
        await task.destroy();
      }
      await running;
      stopped();
    },
  };
}
