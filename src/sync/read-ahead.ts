/**
 * Iterates `source` one item ahead: while the consumer works on item N (writing it to the sinks,
 * committing its checkpoint), item N+1 is already being fetched. Order is unchanged and nothing
 * is committed early — a read-ahead item that is never consumed (stop, crash) is simply dropped
 * and read again next time. Errors surface when the item is consumed; an abandoned read-ahead
 * that fails is swallowed (it was never part of any commit).
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let pending = iterator.next();
  try {
    for (;;) {
      const current = await pending;
      if (current.done) return;
      pending = iterator.next();
      // Keep a rejection of the read-ahead from being reported as unhandled if we stop here.
      pending.catch(() => undefined);
      yield current.value;
    }
  } finally {
    // Let the source run its own cleanup once its in-flight step settled.
    void pending.then(
      () => iterator.return?.(),
      () => undefined,
    );
  }
}
