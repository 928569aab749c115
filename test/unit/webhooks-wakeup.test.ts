import { describe, expect, it } from 'vitest';
import { Wakeup } from '../../src/webhooks/wakeup.js';

const HOUR = 3_600_000;

/** The processor's wake-up: a wait ends on a notify, or on the delivery it was given settling. */
describe('Wakeup', () => {
  it('says why a wait ended: a notify (before or during the wait), `until` settling, or abort', async () => {
    const wakeup = new Wakeup();
    const signal = new AbortController().signal;
    wakeup.notify();
    expect(await wakeup.wait(HOUR, signal)).toBe('notified');
    const waiting = wakeup.wait(HOUR, signal);
    wakeup.notify();
    expect(await waiting).toBe('notified');
    expect(await wakeup.wait(HOUR, signal, Promise.resolve())).toBe('until');
    expect(await wakeup.wait(HOUR, signal, Promise.reject(new Error('delivery failed')))).toBe('until');
    const aborted = new AbortController();
    const stopping = wakeup.wait(HOUR, aborted.signal, new Promise(() => undefined));
    aborted.abort();
    expect(await stopping).toBe('aborted');
  });

  it('keeps a notify that comes after a wait ended on `until` for the next wait', async () => {
    const wakeup = new Wakeup();
    const signal = new AbortController().signal;
    let settle!: () => void;
    const waiting = wakeup.wait(HOUR, signal, new Promise<void>((resolve) => (settle = resolve)));
    settle();
    expect(await waiting).toBe('until');
    // Settling is not a notify: nothing is pending afterwards.
    expect(await wakeup.wait(HOUR, signal, Promise.resolve())).toBe('until');
    wakeup.notify();
    expect(await wakeup.wait(HOUR, signal, new Promise(() => undefined))).toBe('notified');
  });
});
