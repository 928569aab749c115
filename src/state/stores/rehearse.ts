import type { StateStores } from './index.js';

/** Carries the rehearsal's result out of the transaction it rolls back. */
class RolledBack<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `work` against the stores inside ONE transaction that is always rolled back: everything
 * `work` writes is visible to its own later reads and to nothing else, and the database is left
 * exactly as it was (`push --dry-run` runs the real intake this way, so its answers are the real
 * push's answers). `transaction` on the stores handed over joins the same transaction instead of
 * nesting. On SQLite the write lock is held until the rollback: keep `work` short and free of
 * network I/O (another writer waits up to its busy timeout).
 */
export async function rehearse<T>(stores: Pick<StateStores, 'transaction'>, work: (stores: StateStores) => Promise<T>): Promise<T> {
  try {
    await stores.transaction(async (tx) => {
      const joined: StateStores = { ...tx, transaction: (inner) => inner(joined) };
      // Throwing is how a Kysely transaction is rolled back.
      throw new RolledBack(await work(joined));
    });
  } catch (outcome) {
    if (outcome instanceof RolledBack) return outcome.value as T;
    throw outcome;
  }
  throw new Error('rehearse: the transaction committed although it must always roll back');
}
