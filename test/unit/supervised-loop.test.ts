import { describe, expect, it } from 'vitest';
import { FailureBudget, LoopDiedError, runSupervisedLoop } from '../../src/util/supervised-loop.js';
import { capturingLogger } from '../helpers/log-capture.js';

describe('runSupervisedLoop', () => {
  it('survives failures below the budget, logging each with the loop name, and goes on', async () => {
    const { logger, text } = capturingLogger('info');
    const stop = new AbortController();
    let calls = 0;
    await runSupervisedLoop({ name: 'test loop', logger, signal: stop.signal, maxConsecutiveFailures: 3, baseDelayMs: 1, maxDelayMs: 2 }, async () => {
      calls += 1;
      // Fails, fails, works, fails, fails, works...: never three in a row.
      if (calls % 3 !== 0) throw new Error(`boom ${calls}`);
      if (calls >= 9) stop.abort();
    });
    expect(calls).toBe(9);
    expect(text()).toContain('test loop failed; trying again in 1 ms');
    expect(text()).toContain('boom 8');
  });

  it('rejects with LoopDiedError naming the loop and the last error once failures in a row reach the budget', async () => {
    const { logger } = capturingLogger('info');
    let calls = 0;
    const error = await runSupervisedLoop({ name: 'outbound poll', logger, signal: new AbortController().signal, maxConsecutiveFailures: 4, baseDelayMs: 1, maxDelayMs: 1 }, async () => {
      calls += 1;
      throw new Error('SQLITE_CORRUPT: database disk image is malformed');
    }).catch((e: unknown) => e);
    expect(calls).toBe(4);
    expect(error).toBeInstanceOf(LoopDiedError);
    expect((error as Error).message).toBe('outbound poll stopped after 4 failures in a row: SQLITE_CORRUPT: database disk image is malformed');
  });

  it('ends normally on an abort error once its signal is aborted', async () => {
    const { logger, text } = capturingLogger('info');
    const stop = new AbortController();
    await runSupervisedLoop({ name: 'aborting', logger, signal: stop.signal }, async () => {
      stop.abort();
      const error = new Error('aborted');
      error.name = 'AbortError';
      throw error;
    });
    expect(text()).not.toContain('failed');
  });
});

describe('FailureBudget', () => {
  it('pauses double from the base up to the maximum and reset after a success', () => {
    const budget = new FailureBudget('x', { maxConsecutive: 10, baseDelayMs: 100, maxDelayMs: 500 });
    expect([budget.failed(new Error('a')), budget.failed(new Error('b')), budget.failed(new Error('c')), budget.failed(new Error('d'))]).toEqual([100, 200, 400, 500]);
    budget.succeeded();
    expect(budget.consecutive).toBe(0);
    expect(budget.failed(new Error('e'))).toBe(100);
    expect(budget.exhausted).toBeUndefined();
  });
});
