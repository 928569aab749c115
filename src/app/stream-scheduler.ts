import cron, { type ScheduledTask } from 'node-cron';
import { runStream, type StreamRunSummary } from '../sync/stream-runner.js';
import type { AppContext } from './app-context.js';
import { incrementalPlan, type ResolvedStream } from './stream-settings.js';

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
  private readonly running = new Map<string, Promise<void>>();
  readonly lastSummaries = new Map<string, StreamRunSummary>();

  constructor(
    private readonly app: AppContext,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    for (const stream of this.app.streams) {
      // Push-only streams (events, loadDocuments) have nothing to poll; webhooks feed them.
      if (stream.definition.pushOnly) continue;
      const task = cron.schedule(stream.settings.schedule, () => this.trigger(stream, 'schedule'), {
        name: `stream:${stream.definition.name}`,
        timezone: 'UTC',
      });
      this.tasks.push(task);
      if (this.options.runOnStart) this.trigger(stream, 'start');
    }
  }

  /** Starts a run unless one is going (returns false then). Also used by webhooks to pull early. */
  trigger(stream: ResolvedStream, reason: string): boolean {
    const name = stream.definition.name;
    if (this.options.stopSignal.aborted) return false;
    if (this.running.has(name)) {
      this.app.logger.debug({ stream: name, reason }, 'previous run still going; tick skipped');
      return false;
    }
    const run = (async () => {
      try {
        const summary = await runStream(this.app.deps, {
          definition: stream.definition,
          sinks: this.app.sinksFor(stream),
          pageSize: stream.pageSize,
          options: stream.options,
          plan: incrementalPlan(stream.settings),
          command: 'run',
          signal: this.options.abortSignal,
          stopSignal: this.options.stopSignal,
        });
        this.lastSummaries.set(name, summary);
        this.options.onRun?.(summary);
        const level = summary.status === 'failed' ? 'error' : 'info';
        this.app.logger[level](
          { stream: name, status: summary.status, delivered: summary.delivered, deletes: summary.deletes, pages: summary.pages, error: summary.error },
          `stream ${name} ${summary.status}`,
        );
      } catch (error) {
        this.app.logger.error({ err: error, stream: name }, 'stream run crashed');
      } finally {
        this.running.delete(name);
      }
    })();
    this.running.set(name, run);
    return true;
  }

  triggerByName(name: string, reason: string): boolean {
    const stream = this.app.streams.find((s) => s.definition.name === name);
    return stream ? this.trigger(stream, reason) : false;
  }

  isRunning(name: string): boolean {
    return this.running.has(name);
  }

  async stop(): Promise<void> {
    for (const task of this.tasks) await task.stop();
    for (const task of this.tasks) await task.destroy();
    await Promise.allSettled([...this.running.values()]);
  }
}
