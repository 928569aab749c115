import { InMemoryTokenStore } from '../../src/api/token-store.js';
import type { TOOK_OVER_EXPIRED_LOCK } from '../../src/contracts/token-store.js';

/** A token store whose refresh lock another process holds: `acquire` says what each attempt gets. */
export class LockingStore extends InMemoryTokenStore {
  acquire: () => boolean | typeof TOOK_OVER_EXPIRED_LOCK = () => false;
  attempts = 0;
  released = 0;

  async acquireRefreshLock(): Promise<boolean | typeof TOOK_OVER_EXPIRED_LOCK> {
    this.attempts += 1;
    return this.acquire();
  }

  async releaseRefreshLock(): Promise<void> {
    this.released += 1;
  }
}

/** Resolves once `check` holds (polled on timers; the test's own timeout is the deadline). */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}
