import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { ContractLogger, WriterFence } from '../../src/contracts/index.js';
import { sleep, throwIfAborted } from '../../src/util/abort.js';
import { FreightSyncError } from '../../src/util/errors.js';
import { writeFileAtomic, type FileTarget } from './file-target.js';

/** In the hidden staging folder: consumers, retention and recovery never look at it. */
export const WRITER_LOCK = 'writer.lock';
const POLL_MS = 200;
/** A lock of another host not refreshed for this long belongs to a writer that is gone. */
const FOREIGN_STALE_MS = 10 * 60_000;
const REFRESH_MS = 60_000;

interface LockHolder {
  host: string;
  pid: number;
  token: string;
  at: string;
  /** The lease the holder wrote under when it wrote the lock (ConnectorContext.writerFence). */
  fence?: LeaseMark;
}

/** A lease as a lock file names it. */
interface LeaseMark {
  scope: string;
  epoch: number;
}

/**
 * Another writer took the lock over while this one held it: this one was paused (a frozen VM, a
 * stalled mount) past `FOREIGN_STALE_MS`, and the other has published, or is publishing, this
 * one's staged pages as a crashed writer's. Whatever this writer was doing is not acknowledged.
 */
export class DropWriterLockLostError extends FreightSyncError {
  constructor(directory: string, holder: LockHolder | undefined, sinceMs: number) {
    const by = holder ? `${holder.host} pid ${holder.pid} (since ${holder.at})` : 'nobody (the lock file is gone)';
    super(
      'DROP_LOCK_LOST',
      `drop ${directory}: the writer lock was taken over while this writer held it (last refreshed ${Math.round(sinceMs / 1000)} s ago; now held by ${by}); nothing more of this writer's is acknowledged: its staged pages are the new holder's to publish, and the page in hand is written again`,
    );
  }
}

export interface DropLockOptions {
  /** This writer's host name (tests play two hosts on one drop); defaults to `os.hostname()`. */
  readonly host?: string;
  /** The clock lock times are read and written with; defaults to the system clock. */
  readonly now?: () => number;
  /** The account lease this writer works under now (ConnectorContext.writerFence). */
  readonly fence?: () => WriterFence | undefined;
}

/** Locks held by sinks of this process (two sinks on one drop, e.g. a reconcile repair beside the pull). */
const heldHere = new Set<string>();

/**
 * One writer at a time per drop directory, while it has a batch open: batch names are chosen, pages
 * staged and the batch published under the lock, so two processes on one drop (`run` beside a
 * `sync` or `backfill`) never share a batch name or publish each other's pages. The lock is a file
 * created exclusively; a holder that is gone (its pid no longer runs on this host, or another
 * host's lock not refreshed for 10 minutes) is taken over. Waiters poll.
 *
 * Under an account lease (`fence`), the lock records the lease's epoch, and a writer holding a
 * later epoch of the same lease takes the lock over at once, whoever and wherever the holder is:
 * a later epoch exists only once the earlier holder's lease has ended, so that holder is paused,
 * cut off or gone, and acknowledges nothing more (`keep`). Without this, a replica that failed
 * over from a paused holder, or from one on another host, waited for the lock as long as the
 * holder stayed paused, up to 10 minutes.
 */
export class DropWriterLock {
  private held = false;
  private lastRefresh = 0;
  /** The lease the lock file names (undefined: none). */
  private written: LeaseMark | undefined;
  private readonly token = randomBytes(8).toString('hex');
  private readonly host: string;
  private readonly now: () => number;
  private readonly fenceOf: (() => WriterFence | undefined) | undefined;

  constructor(
    private readonly target: FileTarget,
    private readonly stagingDir: string,
    private readonly logger: ContractLogger,
    options: DropLockOptions = {},
  ) {
    this.host = options.host ?? os.hostname();
    this.now = options.now ?? Date.now;
    this.fenceOf = options.fence;
  }

  get isHeld(): boolean {
    return this.held;
  }

  /**
   * True when this call took the lock (the caller then re-reads what other writers left). With
   * `wait: false`, gives up at once (false) while a live writer holds it.
   */
  async acquire(signal: AbortSignal, { wait = true }: { wait?: boolean } = {}): Promise<boolean> {
    if (this.held) return false;
    let announced = false;
    for (;;) {
      throwIfAborted(signal);
      const fence = this.liveFence();
      if (await this.target.createExclusive(this.stagingDir, WRITER_LOCK, this.content(fence))) {
        this.held = true;
        this.lastRefresh = this.now();
        this.written = fence;
        heldHere.add(this.token);
        return true;
      }
      const holder = await this.holder();
      if (!holder) continue;
      if (fence && holder.fence && holder.fence.scope === fence.scope && holder.fence.epoch < fence.epoch) {
        this.logger.info(
          { directory: this.target.describe(this.stagingDir), holder, epoch: fence.epoch },
          `taking over the drop writer lock of an earlier holder of lease ${fence.scope} (epoch ${holder.fence.epoch}; this writer holds epoch ${fence.epoch})`,
        );
        await this.target.removeIfExists(this.lockPath());
        continue;
      }
      if (this.gone(holder)) {
        this.logger.warn({ directory: this.target.describe(this.stagingDir), holder }, 'taking over the drop writer lock of a process that is gone');
        await this.target.removeIfExists(this.lockPath());
        continue;
      }
      if (!wait) return false;
      if (!announced) {
        this.logger.info({ directory: this.target.describe(this.stagingDir), holder: { host: holder.host, pid: holder.pid, since: holder.at } }, 'another process is writing this drop; waiting for it to publish its batch');
        announced = true;
      }
      await sleep(POLL_MS, signal);
    }
  }

  /**
   * Called before and after every page is staged and before a batch is published: keeps a long
   * open batch's lock fresh for writers on other hosts, and makes sure it is still this writer's.
   * Nothing is read within `REFRESH_MS` of the last refresh while the lease the lock was written
   * under is still held: no other host takes over a lock younger than `FOREIGN_STALE_MS` (ten
   * times that), and no later epoch of a lease exists while it is held. Otherwise — this writer was
   * paused or stalled, or its lease ended or changed — the lock is read first: another writer's
   * lock (or none) means it was taken over, and `DropWriterLockLostError` is thrown before
   * anything is acknowledged or published, and without overwriting the new holder's lock. What is
   * left is the few milliseconds between that read and the rewrite, and only for a lock that could
   * be taken over.
   */
  async keep(): Promise<void> {
    if (!this.held) return;
    const since = this.now() - this.lastRefresh;
    const fence = this.liveFence();
    // Held since the lock was written under it, or never under a lease: the rules above say no one took it.
    const sameTenure = fence ? fence.epoch === this.written?.epoch : this.written === undefined;
    if (since < REFRESH_MS && sameTenure) return;
    const holder = await this.holder();
    if (holder?.token !== this.token) {
      this.held = false;
      heldHere.delete(this.token);
      throw new DropWriterLockLostError(this.target.describe(this.stagingDir), holder, since);
    }
    // Its lease ended (a publish at close, say): the lock keeps naming it, so a later epoch still
    // takes it over at once — and this writer reads it before each step from now on.
    const mark = fence ?? this.written;
    await writeFileAtomic(this.target, this.stagingDir, WRITER_LOCK, this.content(mark));
    this.lastRefresh = this.now();
    this.written = mark;
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    heldHere.delete(this.token);
    // Only our own lock: a writer that took it over (we were paused too long) keeps its own.
    if ((await this.holder())?.token === this.token) await this.target.removeIfExists(this.lockPath());
  }

  private gone(holder: LockHolder): boolean {
    if (holder.host !== this.host) return this.now() - Date.parse(holder.at) > FOREIGN_STALE_MS;
    // Our pid but not a live sink of ours: an earlier run of this process id (a restarted container).
    if (holder.pid === process.pid) return !heldHere.has(holder.token);
    try {
      process.kill(holder.pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }

  private async holder(): Promise<LockHolder | undefined> {
    try {
      const text = (await this.target.read(this.lockPath(), new AbortController().signal)).toString('utf8');
      return JSON.parse(text) as LockHolder;
    } catch {
      // Released between the failed create and this read (or half-visible): try again.
      return undefined;
    }
  }

  private lockPath(): string {
    return this.target.join(this.stagingDir, WRITER_LOCK);
  }

  /** The lease this writer works under, while it is held. */
  private liveFence(): LeaseMark | undefined {
    const fence = this.fenceOf?.();
    return fence?.held() ? { scope: fence.scope, epoch: fence.epoch } : undefined;
  }

  private content(mark: LeaseMark | undefined): Buffer {
    const holder: LockHolder = { host: this.host, pid: process.pid, token: this.token, at: new Date(this.now()).toISOString() };
    if (mark) holder.fence = mark;
    return Buffer.from(JSON.stringify(holder));
  }
}
