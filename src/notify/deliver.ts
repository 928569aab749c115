import { isAbortError, linkSignals, sleep } from '../util/abort.js';
import { backoffCeiling } from '../util/backoff.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import type { NotificationChannel } from './channels/channel.js';
import type { NotificationMessage } from './notification-message.js';

export interface DeliverySettings {
  attempts: number;
  timeoutMs: number;
  /** Pause before the second attempt, doubling after (capped at 30 s). */
  retryBaseMs: number;
}

/**
 * Sends one message over one channel, trying up to `attempts` times. Never throws: a message that
 * could not be delivered is logged (naming the channel and the cause) and reported as `false`, so
 * a dead mail server cannot stop the daemon.
 */
export async function deliver(channel: NotificationChannel, message: NotificationMessage, settings: DeliverySettings, signal: AbortSignal, logger: Logger): Promise<boolean> {
  for (let attempt = 1; attempt <= settings.attempts; attempt++) {
    if (signal.aborted) return false;
    // Not AbortSignal.any: `signal` is the daemon's, alive for months (util/abort.ts linkSignals).
    const attemptSignal = linkSignals([signal, AbortSignal.timeout(settings.timeoutMs)]);
    try {
      await channel.send(message, attemptSignal.signal);
      logger.info({ channel: channel.name, event: message.event, title: message.title }, 'notification sent');
      return true;
    } catch (error) {
      const last = attempt === settings.attempts;
      const reason = isAbortError(error) && !signal.aborted ? `no answer within ${settings.timeoutMs} ms` : describeError(error);
      logger.warn({ channel: channel.name, attempt, attempts: settings.attempts, title: message.title }, `notification not delivered: ${reason}${last ? '; giving up on it' : '; trying again'}`);
      if (last) return false;
      await sleep(backoffCeiling({ attempt: attempt - 1, baseMs: settings.retryBaseMs, maxMs: 30_000 }), signal).catch(() => undefined);
    } finally {
      attemptSignal.dispose();
    }
  }
  return false;
}
