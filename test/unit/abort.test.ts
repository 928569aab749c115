import { describe, expect, it } from 'vitest';
import { untilNotified } from '../../src/util/abort.js';

/** A one-callback source: `notify` calls whatever is subscribed; `subscribed` tells if one is. */
function source() {
  let callback: (() => void) | undefined;
  return {
    subscribe: (notify: () => void) => {
      callback = notify;
      return () => {
        callback = undefined;
      };
    },
    notify: () => callback?.(),
    get subscribed() {
      return callback !== undefined;
    },
  };
}

describe('untilNotified', () => {
  it('resolves when notified and leaves no listener on the signal', async () => {
    const events = source();
    const controller = new AbortController();
    let settled = false;
    const waiting = untilNotified(events.subscribe, controller.signal).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    events.notify();
    await waiting;
    expect(settled).toBe(true);
    // An abort after the notification changes nothing (no unhandled rejection, no late unsubscribe).
    controller.abort(new Error('late'));
    expect(events.subscribed).toBe(true);
  });

  it('rejects with the reason when the signal aborts first, and takes its callback back', async () => {
    const events = source();
    const controller = new AbortController();
    const waiting = untilNotified(events.subscribe, controller.signal);
    expect(events.subscribed).toBe(true);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
    expect(events.subscribed).toBe(false);
  });

  it('rejects at once, subscribing nothing, when the signal has aborted already; a reason that is no Error becomes an AbortError', async () => {
    const events = source();
    await expect(untilNotified(events.subscribe, AbortSignal.abort('shutdown'))).rejects.toMatchObject({ name: 'AbortError', message: 'shutdown' });
    expect(events.subscribed).toBe(false);
  });

  it('resolves a source that notifies at once, inside subscribe, leaving no listener on the signal', async () => {
    const controller = new AbortController();
    let unsubscribed = 0;
    await untilNotified((notify) => {
      notify();
      return () => (unsubscribed += 1);
    }, controller.signal);
    // Were the abort listener still there, aborting would take the (long gone) callback back.
    controller.abort(new Error('later'));
    expect(unsubscribed).toBe(0);
  });

  it('waits without a signal until notified', async () => {
    const events = source();
    const waiting = untilNotified(events.subscribe);
    events.notify();
    await expect(waiting).resolves.toBeUndefined();
  });
});
