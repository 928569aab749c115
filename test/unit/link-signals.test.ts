import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignals } from '../../src/util/abort.js';

describe('linkSignals', () => {
  it('aborts with the reason of the source that aborted, and leaves no listener behind', () => {
    const daemon = new AbortController();
    const attempt = new AbortController();
    const link = linkSignals([daemon.signal, attempt.signal]);
    expect(getEventListeners(daemon.signal, 'abort')).toHaveLength(1);
    const reason = new Error('attempt deadline');
    attempt.abort(reason);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe(reason);
    // Aborting unlinked it from the long-lived daemon signal already.
    expect(getEventListeners(daemon.signal, 'abort')).toHaveLength(0);
  });

  it('dispose unlinks it from every source: many operations leave the long-lived signal as it was', () => {
    const daemon = new AbortController();
    for (let i = 0; i < 1_000; i += 1) {
      const link = linkSignals([daemon.signal, new AbortController().signal]);
      link.dispose();
    }
    expect(getEventListeners(daemon.signal, 'abort')).toHaveLength(0);
    const link = linkSignals([daemon.signal]);
    daemon.abort('stop');
    expect(link.signal.reason).toBe('stop');
  });

  it('is aborted at once when a source already is', () => {
    const done = AbortSignal.abort(new Error('already'));
    const link = linkSignals([new AbortController().signal, done]);
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as Error).message).toBe('already');
  });
});
