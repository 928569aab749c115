/** Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves when the callback handed to `subscribe` is called, or rejects with the signal's reason
 * as soon as it aborts; `subscribe` returns how to take the callback back, which an abort does.
 */
export function untilNotified(subscribe: (notify: () => void) => () => void, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    let unsubscribe = (): void => undefined;
    const onAbort = (): void => {
      unsubscribe();
      reject(abortReason(signal!));
    };
    // Listening first: a source that notifies at once, inside `subscribe`, must leave no listener behind.
    signal?.addEventListener('abort', onAbort, { once: true });
    unsubscribe = subscribe(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'operation aborted');
  error.name = 'AbortError';
  return error;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'CanceledError');
}

/**
 * A signal that aborts, with the same reason, as soon as one of `sources` does — what
 * `AbortSignal.any` gives — plus `dispose`, which unlinks it once the work it guards is over. Use
 * it where a long-lived signal (a daemon's stop signal) is combined per operation: on Node 20
 * every signal `AbortSignal.any` makes stays registered on its sources until they abort or die
 * (nodejs/node#55351), so combining per notification or per refresh grows without bound.
 */
export function linkSignals(sources: readonly AbortSignal[]): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listeners = sources.map((source) => {
    const onAbort = (): void => {
      controller.abort(source.reason);
      dispose();
    };
    source.addEventListener('abort', onAbort, { once: true });
    return { source, onAbort };
  });
  const dispose = (): void => {
    for (const { source, onAbort } of listeners) source.removeEventListener('abort', onAbort);
  };
  return { signal: controller.signal, dispose };
}
