import { describe, expect, it } from 'vitest';
import type { OutboundEngine } from '../../src/outbound/outbound-engine.js';
import { outboundService } from '../../src/outbound/outbound-service.js';
import { abortReason } from '../../src/util/abort.js';
import { capturingLogger } from '../helpers/log-capture.js';

/**
 * The outbound service under an account's lease: when the tenure is cut (the lease passed its
 * deadline, the second SIGTERM), the poll aborted by the cut ends the loop. Before, the loop took
 * the aborted poll for a failure and retried it with backoff until the service was stopped
 * (cluster chaos: "outbound poll failed; trying again" 1, 2, 4, 8 s after the cut, through an
 * 18 s drain).
 */
describe('outbound service cut by its abort signal', () => {
  it('ends its poll loop at once, logging no failure', async () => {
    const capture = capturingLogger('info');
    const abort = new AbortController();
    let polls = 0;
    let dispatchEnded!: () => void;
    const engine = {
      lease: { acquire: async () => undefined, release: async () => undefined },
      dispatcher: {
        recover: async () => undefined,
        // The dispatch loop ends on the abort too (as the real one does).
        drain: ({ abortSignal }: { abortSignal: AbortSignal }) =>
          new Promise<void>((resolve) => {
            dispatchEnded = resolve;
            abortSignal.addEventListener('abort', () => resolve(), { once: true });
          }),
      },
      writeBack: { sweep: async () => undefined },
      poll: async (signal: AbortSignal) => {
        polls += 1;
        // A poll in flight when the tenure is cut: its request is aborted.
        await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(abortReason(signal)), { once: true }));
        return { sourceErrors: [] };
      },
    } as unknown as OutboundEngine;
    const service = outboundService({ engine, pollIntervalMs: 10, logger: capture.logger, stopSignal: new AbortController().signal, abortSignal: abort.signal, failurePauseMs: { base: 5, max: 5 } });
    const { loops } = await service.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // As the lease service cuts a tenure (leaseExpiredAbort): an AbortError.
    abort.abort(Object.assign(new Error('lease of account acct (epoch 1) not renewed within its TTL'), { name: 'AbortError' }));
    const ended = await Promise.race([loops.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))]);
    dispatchEnded();
    expect(ended).toBe('ended');
    expect(polls).toBe(1);
    expect(capture.text()).not.toContain('outbound poll failed');
    await service.stop();
  });
});
