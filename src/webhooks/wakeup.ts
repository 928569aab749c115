/**
 * A level-triggered wake-up: `notify` marks work as available; `wait` resolves at once if it was
 * marked since the last wait, else on the next notify, the timeout, or abort (never rejects).
 */
export class Wakeup {
  private pending = false;
  private waiter: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.waiter?.();
  }

  wait(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiter = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiter = done;
    });
  }
}
