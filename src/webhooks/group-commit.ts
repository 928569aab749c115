/** Entries committed together at most (one transaction; a bigger backlog takes several). */
const DEFAULT_MAX_GROUP = 500;

interface Waiting<T, R> {
  entry: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: entries submitted while a commit is running (or within the same turn of the event
 * loop) are committed together by the next `commit` call, one transaction for the group instead of
 * one per entry. Under a burst of deliveries the groups grow by themselves (everything that arrived
 * during the last commit), alone an entry waits one turn of the event loop.
 *
 * Each `submit` settles only after the commit holding ITS entry returned: resolved with that
 * entry's result, or rejected with the commit's error — every entry of a failed group is rejected
 * (the receiver answers 503 to each, and the sender retries them). Commits run one at a time, in
 * submission order.
 */
export class GroupCommitter<T, R> {
  private queue: Array<Waiting<T, R>> = [];
  private draining = false;

  constructor(
    /** Commits the entries in one transaction; returns one result per entry, in order. */
    private readonly commit: (entries: readonly T[]) => Promise<readonly R[]>,
    private readonly maxGroup = DEFAULT_MAX_GROUP,
  ) {}

  submit(entry: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      if (this.draining) return;
      this.draining = true;
      // One turn of the event loop: deliveries read in the same turn join the first group.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.maxGroup);
        let results: readonly R[];
        try {
          results = await this.commit(group.map((w) => w.entry));
          if (results.length !== group.length) throw new Error(`group commit: ${results.length} results for ${group.length} entries`);
        } catch (error) {
          for (const waiting of group) waiting.reject(error);
          continue;
        }
        group.forEach((waiting, i) => waiting.resolve(results[i]!));
      }
    } finally {
      this.draining = false;
    }
  }
}
