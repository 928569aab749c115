/**
 * Whether the consumer of a read-ahead waits for its next item right now. A reader may work
 * further ahead (ask for a page before it is needed) only then: a busy consumer would not take
 * the page any earlier, and the page would only sit in memory (src/sync/page-speculation.ts).
 */
export interface ConsumerDemand {
  readonly waiting: boolean;
}

/**
 * Iterates `source` one item ahead: while the consumer works on item N (writing it to the sinks,
 * committing its checkpoint), item N+1 is already being fetched. Order is unchanged and nothing
 * is committed early — a read-ahead item that is never consumed (stop, crash) is simply dropped
 * and read again next time. Errors surface when the item is consumed; an abandoned read-ahead
 * that fails is swallowed (it was never part of any commit). `demand`, when given, is kept
 * telling whether the consumer waits for the item being read.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, demand?: { waiting: boolean }): AsyncGenerator<T> {
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
    if (demand) demand.waiting = false;
    // Let the source run its own cleanup once its in-flight step settled.
    void pending.then(
      () => iterator.return?.(),
      () => undefined,
    );
  }
}
