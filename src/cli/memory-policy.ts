import { limitHeapGrowth } from './heap-growth.js';
import { capYoungGeneration } from './young-generation.js';

/**
 * The V8 heap settings every `freight-sync` process runs with (issue 14, memory): the old
 * generation grows by less between full collections and the young generation is capped. Applied
 * before anything else is loaded: loading the commands' modules already allocates tens of MiB,
 * and a young generation grown meanwhile would stay at that size (young-generation.ts).
 * Benchmarks that run the product in their own process apply it too, to measure what users run.
 */
export function applyMemoryPolicy(env: NodeJS.ProcessEnv = process.env): { heapGrowingPercent: number | undefined; semiSpaceMiB: number | undefined } {
  return { heapGrowingPercent: limitHeapGrowth(env), semiSpaceMiB: capYoungGeneration(env) };
}
