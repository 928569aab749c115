import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/sync/read-ahead.js';

/** A source whose items the test releases one by one, recording whether the consumer waited at each request. */
function manualSource(demand: { waiting: boolean }) {
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
    const demand = { waiting: false };
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
