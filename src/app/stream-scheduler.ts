import cron, { type ScheduledTask } from 'node-cron';
import { runStream, type NamedSink, type StreamRunDeps, type StreamRunSummary } from '../sync/stream-runner.js';
import type { Logger } from '../util/logger.js';
import type { DaemonService } from './daemon.js';
import { incrementalPlan, type ResolvedStream } from './stream-settings.js';

export interface SchedulerDeps {
  streams: readonly ResolvedStream[];
  runDeps: StreamRunDeps;
  sinksFor(stream: ResolvedStream): NamedSink[];
  logger: Logger;
}

export interface SchedulerOptions {
  stopSignal: AbortSignal;
  abortSignal: AbortSignal;
  /** Run every stream once at start instead of waiting for its first cron tick. */
  runOnStart: boolean;
  onRun?: (summary: StreamRunSummary) => void;
}

/**
 * Runs each stream on its own cron schedule (node-cron). A stream never overlaps itself: a tick
 * that finds the previous run still going is skipped (and logged). Different streams run in
 * parallel and share the client's rate budget. `stop` stops the ticks and resolves when every
 * running stream has committed its current batch.
 */
export class StreamScheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly taskOf = new Map<string, ScheduledTask>();
  private readonly running = new Map<string, Promise<void>>();
  readonly lastSummaries = new Map<string, StreamRunSummary>();

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    for (const stream of this.deps.streams) {
      // Push-only streams (events, loadDocuments) have nothing to poll; webhooks feed them.
      if (stream.definition.pushOnly) continue;
      const task = cron.schedule(stream.settings.schedule, () => this.trigger(stream, 'schedule'), {
        name: `stream:${stream.definition.name}`,
        timezone: 'UTC',
      });
      this.tasks.push(task);
      this.taskOf.set(stream.definition.name, task);
      if (this.options.runOnStart) this.trigger(stream, 'start');
    }
  }

  /** Starts a run unless one is going (returns false then). */
  trigger(stream: ResolvedStream, reason: string): boolean {
    const name = stream.definition.name;
    if (this.options.stopSignal.aborted) return false;
    if (this.running.has(name)) {
      this.deps.logger.debug({ stream: name, reason }, 'previous run still going; tick skipped');
      return false;
    }
    const run = (async () => {
      try {
        const summary = await runStream(this.deps.runDeps, {
          definition: stream.definition,
          sinks: this.deps.sinksFor(stream),
          pageSize: stream.pageSize,
          options: stream.options,
          plan: incrementalPlan(stream),
          command: 'run',
          signal: this.options.abortSignal,
          stopSignal: this.options.stopSignal,
        });
        this.lastSummaries.set(name, summary);
        // runStream logged the run's report line ("run finished").
        this.options.onRun?.(summary);
      } catch (error) {
        this.deps.logger.error({ err: error, stream: name }, 'stream run crashed');
      } finally {
        this.running.delete(name);
      }
    })();
    this.running.set(name, run);
    return true;
  }

  /** Each polled stream's next cron tick (UTC), once started; null when node-cron knows none. */
  nextTicks(): Array<{ stream: string; schedule: string; at: Date | null }> {
    return this.deps.streams
      .filter((s) => this.taskOf.has(s.definition.name))
      .map((s) => ({ stream: s.definition.name, schedule: s.settings.schedule, at: this.taskOf.get(s.definition.name)!.getNextRun() }));
  }

  isRunning(name: string): boolean {
    return this.running.has(name);
  }

  /** When the stream's next scheduled run is due (null: not scheduled, e.g. push-only or stopped). */
  nextRunAt(name: string): Date | null {
    if (this.options.stopSignal.aborted) return null;
    return this.taskOf.get(name)?.getNextRun() ?? null;
  }

  async stop(): Promise<void> {
    for (const task of this.tasks) await task.stop();
    for (const task of this.tasks) await task.destroy();
    await Promise.allSettled([...this.running.values()]);
  }
}

/**
 * The scheduler as a daemon service. It starts last and stops first, so no new batch starts while
 * the others drain. A stream run that fails is logged and tried again at its next tick (runs are
 * independent), so its loops never die on their own.
 */
export function schedulerService(scheduler: StreamScheduler): DaemonService {
  let stopped!: () => void;
  const loops = new Promise<void>((resolve) => (stopped = resolve));
  return {
    name: 'scheduler',
    async start() {
      scheduler.start();
      return { loops };
    },
    async stop() {
      await scheduler.stop();
      stopped();
    },
  };
}
