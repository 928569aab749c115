import type { OutboundEngine } from './outbound-engine.js';

export interface PushSummary {
  units: number;
  /** Units handed over again after a crash: nothing new was stored. */
  unitsAlreadyKnown: number;
  requests: number;
  commands: number;
  duplicates: number;
  /** Rejected at intake with a precise error (never sent). */
  invalid: number;
  sourceErrors: string[];
  /** Steps the dispatcher ran (sends, look-ups). */
  steps: number;
  done: number;
  dead: number;
  /** Creates and uploads whose ambiguous outcome was settled by a look-up. */
  reconciled: number;
  unitsWrittenBack: number;
  /** Outbox rows by state after the push (all of them, not only this push's). */
  outbox: Record<string, number>;
  /** Open commands left for a later push or the daemon (next attempt too far away). */
  waiting: number;
  durationMs: number;
}

export interface PushOptions {
  stopSignal: AbortSignal;
  abortSignal: AbortSignal;
  /** Keep waiting for retries due within this long (ms); later ones are left for the next push. */
  maxWaitMs: number;
  /** A source that had nothing is asked again after this long (file inboxes need two listings). */
  settleMs?: number;
}

/**
 * `freight-sync push`: take from every configured source once, then drain the outbox until
 * nothing is due (within `maxWaitMs`), writing results back as units complete.
 */
export async function runPush(engine: OutboundEngine, options: PushOptions): Promise<PushSummary> {
  const started = Date.now();
  await engine.lease.acquire();
  try {
    await engine.dispatcher.recover();
    const poll = await engine.poll(options.abortSignal, { settleMs: options.settleMs ?? 1_100 });
    await engine.dispatcher.drain({ stopSignal: options.stopSignal, abortSignal: options.abortSignal, untilIdle: { maxWaitMs: options.maxWaitMs } });
    await engine.writeBack.sweep();
    const outbox = await engine.outbox.countsByState();
    const stats = engine.dispatcher.stats;
    return {
      units: poll.units.length,
      unitsAlreadyKnown: poll.units.filter((u) => u.known).length,
      requests: poll.units.reduce((n, u) => n + (u.known ? 0 : u.requests), 0),
      commands: poll.units.reduce((n, u) => n + u.commands, 0),
      duplicates: poll.units.reduce((n, u) => n + u.duplicates, 0),
      invalid: poll.units.reduce((n, u) => n + u.invalid, 0),
      sourceErrors: poll.sourceErrors,
      steps: stats.steps,
      done: stats.done,
      dead: stats.dead,
      reconciled: stats.reconciled,
      unitsWrittenBack: engine.writeBack.stats.units,
      outbox,
      waiting: (outbox['pending'] ?? 0) + (outbox['retry'] ?? 0) + (outbox['reconciling'] ?? 0) + (outbox['sending'] ?? 0),
      durationMs: Date.now() - started,
    };
  } finally {
    await engine.lease.release();
  }
}
