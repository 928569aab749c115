import { Prng } from './prng.js';
import { lowerBound } from './sorted.js';

/**
 * Timestamps of lazily generated base records. Records are cut into groups (many of 3–20) that
 * share createdAt and updatedAt to the millisecond, so window-edge bugs show. Both timestamps are
 * non-decreasing in the record position; that is what lets a time-range query over a million
 * generated records become a binary search instead of a scan.
 */
export class Timeline {
  /** groupStart[g] = first position of group g; groupStart[groups] = count. */
  private readonly groupStart: Uint32Array;
  readonly groups: number;
  private readonly startMs: number;
  private readonly createdEndMs: number;
  private readonly lagMs: number;

  constructor(readonly count: number, seed: number, startMs: number, endMs: number) {
    const rng = new Prng(seed ^ 0x71e11e);
    const starts: number[] = [];
    // Upper bound on groups is count; typed array grows by copying once at the end.
    let position = 0;
    while (position < count) {
      starts.push(position);
      const size = rng.chance(0.35) ? 1 : 3 + rng.int(18);
      position += size;
    }
    this.groups = starts.length;
    this.groupStart = new Uint32Array(this.groups + 1);
    this.groupStart.set(starts);
    this.groupStart[this.groups] = count;
    const span = Math.max(0, endMs - startMs);
    // updatedAt trails createdAt by a fixed lag so both stay monotonic and below endMs.
    this.lagMs = Math.min(Math.floor(span / 10), 2 * 86_400_000);
    this.startMs = startMs;
    this.createdEndMs = endMs - this.lagMs;
  }

  groupOf(position: number): number {
    const after = lowerBound(0, this.groups + 1, (g) => (this.groupStart[g] as number) > position);
    return after - 1;
  }

  groupRange(group: number): [number, number] {
    return [this.groupStart[group] as number, this.groupStart[group + 1] as number];
  }

  createdAtMs(position: number): number {
    const g = this.groupOf(position);
    if (this.groups <= 1) return this.startMs;
    return this.startMs + Math.floor((g * (this.createdEndMs - this.startMs)) / (this.groups - 1));
  }

  updatedAtMs(position: number): number {
    return this.createdAtMs(position) + this.lagMs;
  }
}
