/**
 * Two-stage shutdown (graceful then forced), as graphile-worker does it: the first SIGTERM or
 * SIGINT asks every loop to finish its current batch, commit and stop (`stopSignal`); a second
 * one, or the grace period running out, aborts in-flight work (`abortSignal`).
 */
export interface Shutdown {
  readonly stopSignal: AbortSignal;
  readonly abortSignal: AbortSignal;
  /** Removes the signal handlers. */
  dispose(): void;
}

export function installShutdown(options: { graceMs: number; onStop?: (signal: string) => void; onForce?: () => void }): Shutdown {
  const stop = new AbortController();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (!stop.signal.aborted) {
      options.onStop?.(signal);
      stop.abort(new Error(`${signal} received: stopping after the current batch`));
      timer = setTimeout(() => {
        options.onForce?.();
        abort.abort(new Error('grace period over: aborting in-flight work'));
      }, options.graceMs);
      timer.unref();
      return;
    }
    options.onForce?.();
    abort.abort(new Error(`second ${signal}: aborting now`));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    stopSignal: stop.signal,
    abortSignal: abort.signal,
    dispose() {
      if (timer) clearTimeout(timer);
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}
