import type { Kysely } from 'kysely';

/**
 * Some writes must be on disk when they resolve, not merely committed: brokerage rotates the
 * refresh token server-side, so losing the new one to a power cut locks the daemon out. Each
 * dialect knows how to make a commit durable; repositories only say "this one must be". The
 * opener of a database registers its way here, keeping dialect-specific SQL out of repositories.
 * Dialects whose commits are always durable (PostgreSQL with default settings) register nothing.
 */
export type DurableCommit = <T>(work: () => Promise<T>) => Promise<T>;

const registry = new WeakMap<object, DurableCommit>();

export function registerDurableCommit(db: Kysely<any>, durableCommit: DurableCommit): void {
  registry.set(db, durableCommit);
}

/** Runs `work` (typically one transaction) so that its commit survives a power loss. */
export function durableCommit<T>(db: Kysely<any>, work: () => Promise<T>): Promise<T> {
  const hook = registry.get(db);
  return hook ? hook(work) : work();
}
