import { isAbortError, sleep } from '../util/abort.js';
import { FailureBudget } from '../util/supervised-loop.js';
import { backoffDelay } from '../util/backoff.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { CommandRunner, StepOutcome } from './command-runner.js';
import { RECONCILED_KINDS } from './commands/enums.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';

export interface DispatcherSettings {
  concurrency: number;
  maxAttempts: number;
  backoff: { base: number; max: number };
  reconcileDelay: number;
  /**
   * How long after `recover` a command another process left in flight is first looked up
   * (default `reconcileDelay`). That process may have written its request just before it
   * stopped (its lease passed, a kill): until the request's own timeout has run, the API may not
   * have processed it yet, and a look-up finding nothing would send the create a second time.
   */
  recoverDelay?: number;
  /** Longest sleep between looks at the outbox when nothing is due (new commands also wake it). */
  idleCheckMs?: number;
  /**
   * Failures in a row (of the loop's own state reads, or of steps that could not even record
   * their outcome) before `drain` gives up with `LoopDiedError` (default 8). Below that the loop
   * logs, pauses (1 s doubling to 60 s, or `failurePauseMs`) and goes on.
   */
  maxConsecutiveFailures?: number;
  failurePauseMs?: { base: number; max: number };
  /**
   * Why nothing may be sent now (the API account is reauth_required), or undefined. Looked at
   * before each launch; while paused no command is started, none uses an attempt, and `push`
   * (untilIdle) stops at once.
   */
  paused?: () => Promise<string | undefined>;
}

export interface DispatchStats {
  steps: number;
  done: number;
  dead: number;
  reconciled: number;
  deadIds: number[];
}

export interface DrainOptions {
  /** Stop taking new commands; in-flight ones finish and their state is persisted. */
  stopSignal: AbortSignal;
  /** Abort in-flight requests (second signal); their rows are left for reconciliation. */
  abortSignal: AbortSignal;
  /**
   * `push`: return once nothing is in flight and nothing is due within `maxWaitMs`. Absent: run
   * until the stop signal (`run`).
   */
  untilIdle?: { maxWaitMs: number };
}

/**
 * Sends due commands: up to `concurrency` at once across loads, one at a time within a load
 * group, in id order (a status change waits for its load's create). Every outcome is persisted
 * on the row before the next step: attempts, next_attempt_at and last_error carry the retry
 * policy, so a restart continues where this process stopped (pg-boss style).
 */
export class Dispatcher {
  readonly stats: DispatchStats = { steps: 0, done: 0, dead: 0, reconciled: 0, deadIds: [] };
  private readonly inFlight = new Map<string, Promise<void>>();
  private wakeUp: (() => void) | undefined;
  /**
   * A wake (notify, a finished task) that came while the loop was looking at the outbox rather
   * than waiting: the next wait returns at once. Without it the wake is lost whenever the state
   * query takes a moment (PostgreSQL over the network), and the loop sleeps a whole idle check.
   */
  private wokenWhileBusy = false;
  /** Failures of the loop's own state reads, and of steps that could not record their outcome. */
  private readonly failures: FailureBudget;
  private readonly stepFailures: FailureBudget;
  /** The reason of the pause in force (logged once when it starts and once when it ends). */
  private pausedFor: string | undefined;

  constructor(
    private readonly outbox: OutboxStore,
    private readonly runner: CommandRunner,
    private readonly settings: DispatcherSettings,
    private readonly logger: Logger,
    private readonly onFinal: (ids: number[]) => Promise<void>,
  ) {
    const budget = {
      maxConsecutive: settings.maxConsecutiveFailures ?? 8,
      baseDelayMs: settings.failurePauseMs?.base ?? 1_000,
      maxDelayMs: settings.failurePauseMs?.max ?? 60_000,
    };
    this.failures = new FailureBudget('outbound dispatcher', budget);
    this.stepFailures = new FailureBudget('outbound dispatcher (steps)', budget);
  }

  /**
   * Rows a previous process left in `sending` (crash, kill -9): creates and uploads may have
   * reached the API and are reconciled after the usual delay; PUTs are idempotent and retried.
   * Call once, while holding the dispatch lease, before `drain`.
   */
  async recover(): Promise<number> {
    const rows = await this.outbox.interrupted();
    for (const row of rows) await this.leftInFlight(row.id, row.kind, 'interrupted while the request was in flight (process stopped)');
    if (rows.length > 0) this.logger.warn({ rows: rows.length }, 'commands interrupted in flight by a previous process: reconciling them');
    return rows.length;
  }

  /** New commands arrived: look now instead of at the next idle check. */
  notify(): void {
    this.wake();
  }

  private wake(): void {
    this.wokenWhileBusy = true;
    this.wakeUp?.();
  }

  async drain(options: DrainOptions): Promise<void> {
    const idleCheck = this.settings.idleCheckMs ?? 1_000;
    try {
      for (;;) {
        if (options.stopSignal.aborted || options.abortSignal.aborted) break;
        // Steps that could not record their outcome count too: dispatch must not go on silently.
        const died = this.stepFailures.exhausted;
        if (died) throw died;
        // Wakes from here on are news to this look at the outbox.
        this.wokenWhileBusy = false;
        try {
          const pause = await this.settings.paused?.();
          if (pause !== this.pausedFor) {
            if (pause) this.logger.error({ reason: pause }, 'outbound dispatch paused: no command is sent until the API account has credentials again');
            else this.logger.info('outbound dispatch resumed');
            this.pausedFor = pause;
          }
          if (pause) {
            if (options.untilIdle) break;
            await this.waitForChange(idleCheck, options.stopSignal);
            this.failures.succeeded();
            continue;
          }
          const free = this.settings.concurrency - this.inFlight.size;
          let launched = 0;
          if (free > 0) {
            // Ask for more than the free slots: heads of groups already in flight are skipped.
            for (const head of await this.outbox.dueHeads(new Date(), free + this.inFlight.size)) {
              // Stopped or aborted while the heads were read: start nothing more (an aborted
              // launch would use up an attempt without sending anything).
              if (launched >= free || options.stopSignal.aborted || options.abortSignal.aborted) break;
              if (this.inFlight.has(head.load_group)) continue;
              launched += 1;
              this.launch(head.id, head.load_group, options.abortSignal);
            }
          }
          if (this.inFlight.size > 0 && !options.untilIdle) {
            // A finishing task wakes the loop; no need to look at the backlog now.
            await this.waitForChange(idleCheck, options.stopSignal);
            this.failures.succeeded();
            continue;
          }
          const summary = await this.outbox.openSummary();
          const now = Date.now();
          // Due now but not launched (slots full or group busy): a finishing task wakes the loop.
          let nextDue = summary.nextDueAt ?? Number.POSITIVE_INFINITY;
          if (nextDue <= now) {
            if (this.inFlight.size > 0) nextDue = Number.POSITIVE_INFINITY;
            else if (launched === 0) nextDue = (await this.outbox.nextHeadDueAt()) ?? Number.POSITIVE_INFINITY;
            else nextDue = now;
          }
          if (options.untilIdle && this.inFlight.size === 0 && launched === 0) {
            if (summary.open === 0) break;
            if (nextDue - now > options.untilIdle.maxWaitMs) break;
          }
          const waitMs = Math.max(0, Math.min(nextDue - Date.now(), idleCheck));
          await this.waitForChange(waitMs, options.stopSignal);
          this.failures.succeeded();
        } catch (error) {
          if (isAbortError(error) && (options.stopSignal.aborted || options.abortSignal.aborted)) break;
          // A locked or unreachable state database: log, pause, look again (throws once exhausted).
          const pause = this.failures.failed(error);
          this.logger.error({ err: error, failures: this.failures.consecutive }, `outbound dispatch loop failed; looking again in ${pause} ms`);
          await sleep(pause, options.stopSignal).catch(() => undefined);
        }
      }
    } finally {
      // Let in-flight calls finish and persist their outcome (an abort makes them end quickly).
      await Promise.allSettled([...this.inFlight.values()]);
    }
  }

  private launch(id: number, group: string, signal: AbortSignal): void {
    const task = this.runOne(id, signal)
      .then(() => this.stepFailures.succeeded())
      .catch((error: unknown) => {
        if (isAbortError(error) && signal.aborted) return;
        this.logger.error({ err: error, outboxId: id }, 'outbox step failed unexpectedly');
        try {
          this.stepFailures.failed(error);
        } catch {
          // Budget spent: the drain loop throws it at its next turn.
        }
      })
      .finally(() => {
        this.inFlight.delete(group);
        this.wake();
      });
    this.inFlight.set(group, task);
  }

  private async runOne(id: number, signal: AbortSignal): Promise<void> {
    const row = await this.outbox.get(id);
    if (!row) return;
    if (row.state === 'sending') {
      // Not in flight here (its group is not), so left by another process: same as recover().
      await this.leftInFlight(id, row.kind, 'interrupted while the request was in flight (process stopped)');
      return;
    }
    if (!['pending', 'retry', 'reconciling'].includes(row.state)) return;
    // Aborted since it was launched: nothing is sent, so no attempt is used up.
    if (signal.aborted) return;
    this.stats.steps += 1;
    let outcome: StepOutcome;
    try {
      outcome = await this.runner.step(row, signal);
    } catch (error) {
      // Only an abort gets here mid-request: the row is reconciled later, here or by the replica
      // that takes the account over.
      if (signal.aborted) {
        await this.leftInFlight(id, row.kind, 'interrupted while the request was in flight');
        return;
      }
      outcome = { type: 'retry', error: describeError(error) };
    }
    await this.apply(id, outcome);
  }

  private async apply(id: number, outcome: StepOutcome): Promise<void> {
    const row = await this.outbox.get(id);
    if (!row) return;
    const now = Date.now();
    switch (outcome.type) {
      case 'done':
        await this.outbox.markDone(id, outcome.result);
        this.stats.done += 1;
        if (row.state === 'reconciling' || outcome.result.note?.startsWith('found')) this.stats.reconciled += 1;
        await this.onFinal([id]);
        return;
      case 'dead':
        await this.kill(id, outcome.error);
        return;
      case 'wait':
        await this.outbox.markWaiting(id, 'pending', outcome.error, new Date(now + this.settings.backoff.base));
        return;
      case 'reconcile':
        // An ambiguous outcome is always looked up, even after the last attempt: never left unknown.
        await this.outbox.markWaiting(id, 'reconciling', outcome.error, new Date(now + Math.max(this.settings.reconcileDelay, row.state === 'reconciling' ? this.retryDelay(row.attempts) : 0)));
        return;
      case 'retry':
        if (row.attempts >= this.settings.maxAttempts) {
          await this.kill(id, `gave up after ${row.attempts} attempts: ${outcome.error}`);
          return;
        }
        await this.outbox.markWaiting(id, 'retry', outcome.error, new Date(now + this.retryDelay(row.attempts)));
        return;
    }
  }

  /**
   * A request whose outcome nobody will see: a create or upload is looked up, a PUT retried. The
   * look-up waits out the request timeout (`recoverDelay`): an aborted request may already be on
   * the wire, and the API may process it after a look-up that found nothing, so the create would
   * be sent twice (10-account chaos run 4: a tenure cut by its own clock marked its aborted
   * creates due at once, released the lease, and the next holder looked them up within a second).
   */
  private async leftInFlight(id: number, kind: string, why: string): Promise<void> {
    if (!RECONCILED_KINDS.has(kind)) {
      await this.outbox.markWaiting(id, 'retry', why, new Date());
      return;
    }
    const delay = Math.max(this.settings.reconcileDelay, this.settings.recoverDelay ?? 0);
    await this.outbox.markWaiting(id, 'reconciling', why, new Date(Date.now() + delay));
  }

  /** `attempts` counts the attempts made so far (at least 1), so the first retry waits at most `backoff.base`. */
  private retryDelay(attempts: number): number {
    return backoffDelay({ attempt: attempts - 1, baseMs: this.settings.backoff.base, maxMs: this.settings.backoff.max });
  }

  private async kill(id: number, error: string): Promise<void> {
    await this.outbox.markDead(id, error);
    this.stats.dead += 1;
    this.stats.deadIds.push(id);
    this.logger.warn({ outboxId: id, error }, 'outbound command is dead');
    await this.onFinal([id]);
  }

  private async waitForChange(ms: number, stopSignal: AbortSignal): Promise<void> {
    if (ms <= 0 && this.inFlight.size === 0) return;
    // A stop (or wake) that came while the loop was busy: an abort listener added now would never fire.
    if (this.wokenWhileBusy || stopSignal.aborted) return;
    const signals = new AbortController();
    const onStop = () => signals.abort();
    stopSignal.addEventListener('abort', onStop, { once: true });
    try {
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        sleep(ms, signals.signal).then(resolve, resolve);
        signals.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      this.wakeUp = undefined;
      stopSignal.removeEventListener('abort', onStop);
      signals.abort();
    }
  }
}
