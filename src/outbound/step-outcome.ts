import type { CommandResult } from '../state/stores/outbox-store.js';
import { describeError } from '../util/errors.js';
import { classifyFailure, describeRejection } from './classify-failure.js';

/** What became of one step of a command; the dispatcher turns it into the row's next state. */
export type StepOutcome =
  | { type: 'done'; result: CommandResult }
  | { type: 'dead'; error: string }
  /** Certainly not applied: try again after the backoff. */
  | { type: 'retry'; error: string }
  /** Maybe applied (POST): look it up before anything is sent again. */
  | { type: 'reconcile'; error: string }
  /** Not this command's turn yet (its load's create is not done); no attempt is used. */
  | { type: 'wait'; error: string };

/** A failed request that may have been applied (POST, the outbound delete). */
export function afterPostFailure(error: unknown): StepOutcome {
  const kind = classifyFailure(error);
  if (kind === 'rejected') return { type: 'dead', error: describeRejection(error) };
  if (kind === 'retryable') return { type: 'retry', error: describeError(error) };
  // Ambiguous, or aborted mid-flight: the request may have been processed.
  return { type: 'reconcile', error: kind === 'aborted' ? 'interrupted while the request was in flight' : describeError(error) };
}

/**
 * A failed idempotent request (PUT, GET): the client already retried faults; what is left is
 * retried later. `whenAmbiguous` is the outcome of a look-up that failed while reconciling.
 */
export function afterIdempotentFailure(error: unknown, whenAmbiguous: 'retry' | 'reconcile' = 'retry'): StepOutcome {
  const kind = classifyFailure(error);
  if (kind === 'aborted') throw error;
  if (kind === 'rejected') return { type: 'dead', error: describeRejection(error) };
  return { type: whenAmbiguous, error: describeError(error) };
}
