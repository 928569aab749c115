/** Why a `Wakeup.wait` returned. */
export type WakeReason = 'notified' | 'timeout' | 'aborted' | 'until';

/**
 * A level-triggered wake-up: `notify` marks work as available; `wait` resolves at once if it was
 * marked since the last wait, else on the next notify, the timeout, abort, or `until` settling
 * (never rejects). Only a wait that returns 'notified' consumes the mark: a notify that comes
 * after a wait ended another way is kept for the next wait.
 */
export class Wakeup {
  private pending = false;
  private waiter: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.waiter?.();
  }

  wait(timeoutMs: number, signal: AbortSignal, until?: Promise<unknown>): Promise<WakeReason> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('notified');
    }
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      let finished = false;
      const finish = (reason: WakeReason) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        this.waiter = undefined;
        if (reason === 'notified') this.pending = false;
        resolve(reason);
      };
      const aborted = () => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), timeoutMs);
      signal.addEventListener('abort', aborted, { once: true });
      this.waiter = () => finish('notified');
      until?.then(
        () => finish('until'),
        () => finish('until'),
      );
    });
  }
}
