import { untilNotified } from '../util/abort.js';

/**
 * Whether the consumer of a read-ahead waits for its next item right now. A reader may work
 * further ahead (ask for a page before it is needed) only then: a busy consumer would not take
 * the page any earlier, and the page would only sit in memory (src/sync/page-speculation.ts).
 *
 * A reader ahead of a busy consumer also keeps a page's answer as bytes (off the JS heap) until
 * the consumer waits (`whenWaiting`, awaited by the API client before it parses:
 * src/api/list-peek.ts). Issue 14 (CPU): with the young generation capped at 4 MiB semi-spaces
 * (Node ≥ 22, src/cli/start-up-settings.ts), a page's ~1.5 MB of live records must be garbage
 * by the time the next page is parsed. Parsed while the page before was still being delivered,
 * or kept by a stale reference in a suspended generator (keyset.ts, Chunk.recordsReleasable)
 * through the next parse, they outlived two scavenges and were promoted: 40–98% of each
 * scavenge's survivors, 35–37 full collections instead of 1 in two 20,000-load backfills, and
 * ~35% more CPU per page (Node 22: 14.7–16.7 ms against 10.8–12.5). Whether a run fell into that
 * state depended on timing; the base build did in 6 of 12 runs, this one in none of 12
 * (bench/results-cpu.md, sixteenth session).
 */
export class ConsumerDemand {
  private consumerWaits: boolean;
  /** The consumer has stopped: nothing waits for it any more, nothing is asked ahead. */
  private stopped = false;
  private wakers = new Set<() => void>();

  constructor(waiting = true) {
    this.consumerWaits = waiting;
  }

  get waiting(): boolean {
    return this.consumerWaits && !this.stopped;
  }

  set waiting(value: boolean) {
    this.consumerWaits = value;
    if (value) this.wake();
  }

  /**
   * Resolves once the consumer waits for the next item, or has stopped (an item read then is
   * dropped: the reader must still finish its step to clean up); rejects when `signal` aborts.
   */
  whenWaiting(signal?: AbortSignal): Promise<void> {
    if (this.consumerWaits || this.stopped) return Promise.resolve();
    return untilNotified((wake) => {
      this.wakers.add(wake);
      return () => this.wakers.delete(wake);
    }, signal);
  }

  /** The consumer stops taking items: readers waiting for it go on (and their items are dropped). */
  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private wake(): void {
    const wakers = [...this.wakers];
    this.wakers.clear();
    for (const wake of wakers) wake();
  }
}

/**
 * Iterates `source` one item ahead: while the consumer works on item N (writing it to the sinks,
 * committing its checkpoint), item N+1 is already being fetched. Order is unchanged and nothing
 * is committed early — a read-ahead item that is never consumed (stop, crash) is simply dropped
 * and read again next time. Errors surface when the item is consumed; an abandoned read-ahead
 * that fails is swallowed (it was never part of any commit). `demand`, when given, is kept
 * telling whether the consumer waits for the item being read, and is stopped when the consumer
 * stops: one demand per read-ahead.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, demand?: ConsumerDemand): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let pending = iterator.next();
  try {
    for (;;) {
      // The consumer asked for an item (this generator runs only then) and waits until it is read.
      if (demand) demand.waiting = true;
      const current = await pending;
      if (demand) demand.waiting = false;
      if (current.done) return;
      pending = iterator.next();
      // Keep a rejection of the read-ahead from being reported as unhandled if we stop here.
      pending.catch(() => undefined);
      yield current.value;
    }
  } finally {
    demand?.stop();
    // Let the source run its own cleanup once its in-flight step settled.
    void pending.then(
      () => iterator.return?.(),
      () => undefined,
    );
  }
}
