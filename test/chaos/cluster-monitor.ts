import type pg from 'pg';
import { readLease, type LeaseRef } from './cluster-replicas.js';

/**
 * Samples the shared state every `intervalMs` while the cluster chaos runs: the lease row (epochs
 * must never go down; every change of holder must come with a greater epoch) and every checkpoint
 * (its cursor's time must never go back).
 */
export interface MonitorResult {
  samples: number;
  /** Distinct epochs seen, in order. */
  epochs: number[];
  epochRegressions: string[];
  /** Holder changed while the epoch stayed the same. */
  handsWithoutEpoch: string[];
  checkpointRegressions: string[];
  /** Streams whose cursor was sampled, with how many distinct cursor times. */
  streams: Map<string, number>;
}

/**
 * The time a stored cursor has reached, whatever strategy wrote it (src/sync/strategies/*: keyset,
 * closed/token/day windows keep `highWater`, the end of the last completed range; invoices nest
 * it under `billing`; snapshots keep `lastRunAt`; the webhook catch-up keeps `readUpTo`). A
 * window in progress does not move it: it moves when a range completes.
 */
export function cursorTime(cursorJson: string): string | undefined {
  let c: unknown;
  try {
    c = JSON.parse(cursorJson);
  } catch {
    return undefined;
  }
  if (!c || typeof c !== 'object') return undefined;
  const o = c as Record<string, unknown>;
  if (o['billing'] && typeof o['billing'] === 'object') return cursorTime(JSON.stringify(o['billing']));
  for (const field of ['highWater', 'readUpTo', 'lastRunAt']) if (typeof o[field] === 'string') return o[field] as string;
  return undefined;
}

export class StateMonitor {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private lastEpoch = -1;
  private lastHolder: string | null | undefined;
  private readonly previous = new Map<string, { at: string; ms: number }>();
  private readonly distinct = new Map<string, Set<string>>();
  readonly result: MonitorResult = { samples: 0, epochs: [], epochRegressions: [], handsWithoutEpoch: [], checkpointRegressions: [], streams: new Map() };

  constructor(
    private readonly client: pg.Client,
    private readonly intervalMs = 500,
    private readonly ref?: LeaseRef,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
  }

  async stop(): Promise<MonitorResult> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 20));
    await this.sample();
    for (const [stream, set] of this.distinct) this.result.streams.set(stream, set.size);
    return this.result;
  }

  async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const lease = await readLease(this.client, this.ref);
      if (lease) {
        if (lease.epoch < this.lastEpoch) this.result.epochRegressions.push(`epoch ${this.lastEpoch} → ${lease.epoch}`);
        if (lease.epoch === this.lastEpoch && lease.holder !== null && this.lastHolder !== null && lease.holder !== this.lastHolder) {
          this.result.handsWithoutEpoch.push(`${this.lastHolder} → ${lease.holder} under epoch ${lease.epoch}`);
        }
        if (lease.epoch > this.lastEpoch) this.result.epochs.push(lease.epoch);
        this.lastEpoch = Math.max(this.lastEpoch, lease.epoch);
        this.lastHolder = lease.holder;
      }
      const { rows } = await this.client.query<{ stream: string; cursor: string }>('select stream, cursor from checkpoints');
      for (const row of rows) {
        const at = cursorTime(row.cursor);
        const ms = at === undefined ? NaN : Date.parse(at);
        if (Number.isNaN(ms)) continue;
        // Against the previous sample: a cursor moved back counts once, not in every later sample.
        const before = this.previous.get(row.stream);
        if (before && ms < before.ms) this.result.checkpointRegressions.push(`${row.stream}: ${before.at} → ${at}`);
        this.previous.set(row.stream, { at: at!, ms });
        const set = this.distinct.get(row.stream) ?? new Set<string>();
        set.add(at!);
        this.distinct.set(row.stream, set);
      }
      this.result.samples += 1;
    } catch {
      // A sample that failed (the database busy) is skipped; the next one reads the state again.
    } finally {
      this.busy = false;
    }
  }
}
