import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { nodeArgsOf } from './node-args.js';

/** Largest semi-space the young generation grows to, MiB (V8's own limit on 64-bit is 16). */
export const DEFAULT_SEMI_SPACE_MIB = 4;

/** V8's `--semi-space-growth-factor` default: the new space doubles when enough survives. */
const V8_GROWTH_FACTOR = 2;

const MIB = 1024 * 1024;

/** What the governor needs from V8 (swapped in tests). */
export interface YoungGenerationV8 {
  /** Bytes of the new space (both semi-spaces), as `v8.getHeapSpaceStatistics()` says. */
  newSpaceBytes(): number;
  setGrowthFactor(factor: number): void;
}

const realV8: YoungGenerationV8 = {
  newSpaceBytes: () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0,
  setGrowthFactor: (factor) => setFlagsFromString(`--semi-space-growth-factor=${factor}`),
};

/** The `--max-semi-space-size` given to node among `nodeArgs`, if any. */
export function semiSpaceFlagGiven(nodeArgs: readonly string[]): string | undefined {
  return nodeArgs.find((arg) => /^--max[-_]semi[-_]space[-_]size\b/.test(arg));
}

/**
 * The semi-space cap in MiB this process should keep to: the default, the one of
 * `FREIGHT_SYNC_SEMI_SPACE_MIB`, or none (`0`, not a whole number, or a `--max-semi-space-size`
 * given to node, which wins).
 */
export function semiSpaceCapMiB(env: NodeJS.ProcessEnv = process.env, nodeArgs: readonly string[] = nodeArgsOf(env)): number | undefined {
  if (semiSpaceFlagGiven(nodeArgs)) return undefined;
  const raw = env.FREIGHT_SYNC_SEMI_SPACE_MIB;
  const mib = raw === undefined || raw.trim() === '' ? DEFAULT_SEMI_SPACE_MIB : Number(raw);
  return Number.isInteger(mib) && mib > 0 ? mib : undefined;
}

/**
 * After each collection: growth stays on (V8's doubling) while the new space is below the cap and
 * is switched off once it reached it. Returns the check to run after a collection.
 */
export function youngGenerationGovernor(capMiB: number, v8: YoungGenerationV8 = realV8): () => void {
  // Two semi-spaces; a semi-space doubles from 1 MiB, so a power-of-two cap is met exactly.
  const capBytes = 2 * capMiB * MIB;
  let frozen: boolean | undefined;
  return () => {
    const freeze = v8.newSpaceBytes() >= capBytes;
    if (freeze === frozen) return;
    v8.setGrowthFactor(freeze ? 1 : V8_GROWTH_FACTOR);
    frozen = freeze;
  };
}

/**
 * Issue 14 (memory): V8 grows the young generation up to two 16 MiB semi-spaces under a steady
 * allocation rate such as a backfill's, and all of it stays resident: 32 MiB of a ~160 MiB peak.
 * Its size can only be capped when node starts (`--max-semi-space-size`), which a CLI run as
 * `freight-sync` cannot pass, but V8 reads its growth factor each time it grows the space: this
 * watches the collections and stops the growth at the cap. 4 MiB took a 10^5-load backfill from
 * ~147 to ~136 MiB peak RSS for ~5% more CPU (8 MiB: −16 MiB from V8's own 16 for ~1%;
 * bench/results-scaling.md). Two growths between two turns of the event loop can pass the cap by
 * one step; the next collection stops it there. The observer does not keep the process alive.
 */
export function capYoungGeneration(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const capMiB = semiSpaceCapMiB(env);
  if (capMiB === undefined) return undefined;
  const check = youngGenerationGovernor(capMiB);
  check();
  new PerformanceObserver(check).observe({ entryTypes: ['gc'] });
  return capMiB;
}
