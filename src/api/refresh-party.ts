import { abortReason } from '../util/abort.js';

/**
 * The callers of one shared token refresh. The refresh is single-flight (token-manager.ts): the
 * first caller starts it and later ones join. Each caller stops waiting when its own signal
 * aborts (its tenure was cut, the daemon's grace ran out) — not when the first caller's does —
 * and the refresh itself stops its waits for other processes (their refresh lock, their late
 * rotation) once no caller still waits for it or the manager stops. Cluster chaos (seed 43017):
 * a replica's stop waited ~54 s for a refresh that only waited for another process's pair, and
 * which none of its callers still needed.
 */
export class RefreshParty {
  private readonly controller = new AbortController();
  private waiting = 0;
  /** A caller without a signal waits for good: the refresh then never stops for lack of callers. */
  private unbounded = false;
  private readonly unlinks: Array<() => void> = [];

  constructor(stop: AbortSignal) {
    this.link(stop, () => this.controller.abort(stop.reason));
  }

  /** Aborts once no caller waits any more, or the manager stopped. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Joins a caller; resolves or rejects with the refresh, or rejects as soon as `signal` aborts. */
  join<T>(refresh: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (!signal) {
      this.unbounded = true;
      return refresh;
    }
    if (!signal.aborted) {
      this.waiting += 1;
      this.link(signal, () => {
        this.waiting -= 1;
        this.stopWhenAlone(signal);
      });
    }
    this.stopWhenAlone(signal);
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(abortReason(signal));
      const onAbort = () => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      refresh.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Unlinks from every caller's signal once the refresh is over. */
  dispose(): void {
    for (const unlink of this.unlinks.splice(0)) unlink();
  }

  private stopWhenAlone(signal: AbortSignal): void {
    if (this.waiting === 0 && !this.unbounded && signal.aborted) this.controller.abort(signal.reason);
  }

  private link(signal: AbortSignal, onAbort: () => void): void {
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.unlinks.push(() => signal.removeEventListener('abort', onAbort));
  }
}
