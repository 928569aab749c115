import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { ContractLogger } from '../../src/contracts/index.js';
import { sleep, throwIfAborted } from '../../src/util/abort.js';
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
}

/** Locks held by sinks of this process (two sinks on one drop, e.g. a reconcile repair beside the pull). */
const heldHere = new Set<string>();

/**
 * One writer at a time per drop directory, while it has a batch open: batch names are chosen, pages
 * staged and the batch published under the lock, so two processes on one drop (`run` beside a
 * `sync` or `backfill`) never share a batch name or publish each other's pages. The lock is a file
 * created exclusively; a holder that is gone (its pid no longer runs on this host, or another
 * host's lock not refreshed for 10 minutes) is taken over. Waiters poll.
 */
export class DropWriterLock {
  private held = false;
  private lastRefresh = 0;
  private readonly token = randomBytes(8).toString('hex');

  constructor(
    private readonly target: FileTarget,
    private readonly stagingDir: string,
    private readonly logger: ContractLogger,
  ) {}

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
      if (await this.target.createExclusive(this.stagingDir, WRITER_LOCK, this.content())) {
        this.held = true;
        this.lastRefresh = Date.now();
        heldHere.add(this.token);
        return true;
      }
      const holder = await this.holder();
      if (!holder) continue;
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

  /** Keeps a long open batch's lock fresh for writers on other hosts. */
  async refresh(): Promise<void> {
    if (!this.held || Date.now() - this.lastRefresh < REFRESH_MS) return;
    await writeFileAtomic(this.target, this.stagingDir, WRITER_LOCK, this.content());
    this.lastRefresh = Date.now();
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    heldHere.delete(this.token);
    // Only our own lock: a writer that took it over (we were paused too long) keeps its own.
    if ((await this.holder())?.token === this.token) await this.target.removeIfExists(this.lockPath());
  }

  private gone(holder: LockHolder): boolean {
    if (holder.host !== os.hostname()) return Date.now() - Date.parse(holder.at) > FOREIGN_STALE_MS;
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

  private content(): Buffer {
    const holder: LockHolder = { host: os.hostname(), pid: process.pid, token: this.token, at: new Date().toISOString() };
    return Buffer.from(JSON.stringify(holder));
  }
}
