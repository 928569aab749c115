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

/** A stop signal that arrived while a command was still loading, before installShutdown. */
let earlySignal: NodeJS.Signals | undefined;
let earlyHandler: ((signal: NodeJS.Signals) => void) | undefined;

/**
 * Remembers a SIGTERM/SIGINT that arrives while a long-running command's modules load and its
 * config is read (a second or more on a busy host), instead of dying of it: installShutdown then
 * acts on it at once. Only for commands that go on to call installShutdown.
 */
export function holdEarlyStopSignals(): void {
  if (earlyHandler) return;
  earlyHandler = (signal) => {
    earlySignal ??= signal;
  };
  process.on('SIGTERM', earlyHandler);
  process.on('SIGINT', earlyHandler);
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
  if (earlyHandler) {
    process.off('SIGTERM', earlyHandler);
    process.off('SIGINT', earlyHandler);
    earlyHandler = undefined;
    const signal = earlySignal;
    earlySignal = undefined;
    if (signal) handler(signal);
  }
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
