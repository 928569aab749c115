import { z } from 'zod';
import type { ServerClock } from '../api/server-clock.js';
import type { CheckpointStore } from '../state/stores/checkpoint-store.js';

/** Where the lease holder notes the offset of the API's clock it last measured (shared state). */
export const SERVER_CLOCK_KEY = 'webhooks:server-clock';
const serverClockNote = z.strictObject({ offsetMs: z.number(), observedAt: z.string() });
type ServerClockNote = z.infer<typeof serverClockNote>;

/** A stored offset is read again after this long (a skew drifts slowly; a delivery reads no state then). */
const REREAD_MS = 30_000;
/** While nothing is noted (the holder's first catch-up has not run yet), the note is looked for this often. */
const REREAD_MISSING_MS = 2_000;
/** The holder rewrites its note when its measure moved by this much (the receipt slack is 2 s). */
const NOTE_MOVES_MS = 500;

/**
 * The server's time for stamping a webhook receipt, on any replica. Receipt times compare with
 * the event log's times (the server's clock: arming, coalescing order), so they are stamped in
 * the server's clock as the account's API client measures it. A replica that has not called the
 * API for the account — a standby behind the load balancer, a replica just restarted — has no
 * measure of its own: it takes the offset the lease holder last noted in the shared state
 * (`noteServerClock`), and only without one its own clock. Before, such a replica stamped with its
 * own clock: 150 s off in cluster chaos (a brokerage server behind its hosts), so a change a
 * standby received was ordered, and compared with the log, 150 s late.
 */
export class ReceiptClock {
  private noted: ServerClockNote | undefined;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly clock: ServerClock,
    private readonly checkpoints: Pick<CheckpointStore, 'get'>,
    private readonly localNow: () => number = Date.now,
  ) {}

  async now(): Promise<Date> {
    if (this.clock.known) return this.clock.now();
    if (this.localNow() - this.readAt >= (this.noted ? REREAD_MS : REREAD_MISSING_MS)) {
      this.reading ??= this.read().finally(() => (this.reading = undefined));
      await this.reading;
    }
    return new Date(this.localNow() + (this.noted?.offsetMs ?? 0));
  }

  private async read(): Promise<void> {
    try {
      this.noted = (await this.checkpoints.get(SERVER_CLOCK_KEY, serverClockNote)) ?? this.noted;
    } catch {
      // The state cannot be read: the receipt's own commit will fail and be retried by the sender;
      // the last note (or the host's clock) stamps what does get in.
    }
    this.readAt = this.localNow();
  }
}

/**
 * Notes the offset of the API's clock the holder measures, for the receivers of other replicas
 * (`ReceiptClock`), when it has a measure and the note is missing or off by `NOTE_MOVES_MS`.
 * Returns the offset noted (or the one already there).
 */
export async function noteServerClock(clock: ServerClock, checkpoints: Pick<CheckpointStore, 'get' | 'set'>, lastNoted: number | undefined): Promise<number | undefined> {
  if (!clock.known) return lastNoted;
  const offsetMs = clock.offsetMs;
  const current = lastNoted ?? (await checkpoints.get(SERVER_CLOCK_KEY, serverClockNote))?.offsetMs;
  if (current !== undefined && Math.abs(current - offsetMs) < NOTE_MOVES_MS) return current;
  await checkpoints.set(SERVER_CLOCK_KEY, { offsetMs, observedAt: clock.now().toISOString() }, serverClockNote);
  return offsetMs;
}
