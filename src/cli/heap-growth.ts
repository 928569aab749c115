import { setFlagsFromString } from 'node:v8';
import { nodeArgsOf } from './node-args.js';

/** Old-generation growth between full collections, percent of the heap that survived the last one. */
export const DEFAULT_HEAP_GROWING_PERCENT = 50;

/**
 * Issue 14 (memory): V8 lets the old generation grow to up to 4× the heap that survived the last
 * full collection before collecting again. The daemon's live heap is ~30 MiB (code, module
 * sources, state) and flat, but a backfill allocates fast (pages, records, CSV text), so the heap
 * settled at ~120 MiB, most of it garbage waiting. Growing by 1.5× instead keeps it at ~80 MiB for
 * somewhat more GC time. Set at start-up, before the heap grows; V8 reads the flag at each
 * collection. `FREIGHT_SYNC_HEAP_GROWING_PERCENT=0` leaves V8's own heuristics; a
 * `--heap-growing-percent` on node's command line wins (node refuses it in NODE_OPTIONS; the check
 * reads NODE_OPTIONS too, for a node that would take it).
 */
export function limitHeapGrowth(env: NodeJS.ProcessEnv = process.env, nodeArgs: readonly string[] = nodeArgsOf(env)): number | undefined {
  if (nodeArgs.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return undefined;
  const raw = env.FREIGHT_SYNC_HEAP_GROWING_PERCENT;
  const percent = raw === undefined || raw.trim() === '' ? DEFAULT_HEAP_GROWING_PERCENT : Number(raw);
  if (!Number.isInteger(percent) || percent <= 0) return undefined;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
