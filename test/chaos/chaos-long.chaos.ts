import { describe, expect, it } from 'vitest';
import { chaosSeed, longChaos, type ChaosVariant } from './chaos-options.js';
import { runChaos } from './run-chaos.js';

/**
 * The long chaos run (`npm run chaos`): per variant, at least 20 SIGKILLs of `freight-sync run`
 * under every fault the simulator has, then every sink compared with the truth. The table is
 * printed; any difference fails the run (non-zero exit).
 */
const seed = chaosSeed();
const variants = (process.env.CHAOS_VARIANTS ?? 'main,brokerage').split(',').map((v) => v.trim()) as ChaosVariant[];

describe(`chaos (seed ${seed})`, () => {
  it.each(variants)('%s: nothing lost, nothing duplicated across SIGKILLs', async (variant) => {
    const report = await runChaos(longChaos(seed, variant), (line) => console.log(line));
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
  });
});
