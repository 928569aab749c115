import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ConsumerDemand, readAhead } from '../../src/sync/read-ahead.js';

/** A source whose items the test releases one by one, recording whether the consumer waited at each request. */
function manualSource(demand: ConsumerDemand) {
  const releases: Array<() => void> = [];
  const waitingAtRelease: boolean[] = [];
  async function* source(): AsyncGenerator<number> {
    for (let i = 1; i <= 3; i += 1) {
      await new Promise<void>((resolve) => releases.push(resolve));
      waitingAtRelease.push(demand.waiting);
      yield i;
    }
  }
  return { source, releases, waitingAtRelease };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('readAhead demand', () => {
  it('tells the source whether the consumer waits for the item being read', async () => {
    const demand = new ConsumerDemand(false);
    const { source, releases, waitingAtRelease } = manualSource(demand);
    const items = readAhead(source(), demand);
    const first = items.next();
    await turn();
    releases.shift()!();
    expect(await first).toEqual({ value: 1, done: false });
    // Item 2 is read ahead while the consumer is busy with item 1.
    await turn();
    expect(demand.waiting).toBe(false);
    releases.shift()!();
    await turn();
    expect((await items.next()).value).toBe(2);
    // Item 3: the consumer asks before it is read, and waits.
    const third = items.next();
    await turn();
    expect(demand.waiting).toBe(true);
    releases.shift()!();
    expect((await third).value).toBe(3);
    expect(waitingAtRelease).toEqual([true, false, true]);
    expect((await items.next()).done).toBe(true);
    expect(demand.waiting).toBe(false);
  });
});

describe('ConsumerDemand.whenWaiting (a reader ahead of a busy consumer holds its page unparsed)', () => {
  it('resolves at once while the consumer waits, else when it next waits', async () => {
    const demand = new ConsumerDemand();
    await demand.whenWaiting();
    demand.waiting = false;
    let resolved = false;
    const waiting = demand.whenWaiting().then(() => (resolved = true));
    await turn();
    expect(resolved).toBe(false);
    demand.waiting = true;
    await waiting;
    expect(resolved).toBe(true);
  });

  it('lets every waiting reader go when the consumer stops, and asks nothing ahead after', async () => {
    const demand = new ConsumerDemand(false);
    const both = Promise.all([demand.whenWaiting(), demand.whenWaiting()]);
    demand.stop();
    await both;
    demand.waiting = true;
    expect(demand.waiting).toBe(false);
    await demand.whenWaiting();
  });

  it('rejects with the signal’s reason when the request is aborted, and leaves no listener behind', async () => {
    const demand = new ConsumerDemand(false);
    const controller = new AbortController();
    const waiting = demand.whenWaiting(controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    await expect(demand.whenWaiting(controller.signal)).rejects.toThrow('stop');
    const other = new AbortController();
    const woken = demand.whenWaiting(other.signal);
    demand.waiting = true;
    await woken;
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });

  it('readAhead stops its demand when the consumer stops early', async () => {
    const demand = new ConsumerDemand();
    async function* numbers(): AsyncGenerator<number> {
      for (let i = 0; ; i += 1) yield i;
    }
    for await (const n of readAhead(numbers(), demand)) if (n === 1) break;
    expect(demand.waiting).toBe(false);
    await demand.whenWaiting();
  });
});
