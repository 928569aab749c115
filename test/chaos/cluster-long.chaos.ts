import { describe, expect, it } from 'vitest';
import { chaosSeed, type ChaosVariant } from './chaos-options.js';
import { longClusterChaos } from './cluster-options.js';
import { runClusterChaos } from './run-cluster-chaos.js';

/**
 * `npm run chaos:cluster`: 3 `freight-sync run` replicas on PostgreSQL state serving 10 API
 * accounts (an `accounts:` config, one simulator and set of sinks each, main and brokerage
 * alternating, some brokerage ones on a bare token pair); the replica holding the most leases is
 * SIGKILLed and restarted, one is SIGSTOPped beyond the TTL and SIGCONTed, one's database
 * connections are terminated; then every sink against the truth, outbound and webhooks exactly
 * once, no retired refresh token used, epochs and checkpoints never backwards, no commit by a
 * non-holder.
 *
 * CHAOS_RUNS=3 runs three scenarios in a row (seeds CHAOS_SEED, +1000, +2000: the acceptance
 * "three long runs in a row" as one command). CLUSTER_ACCOUNTS=1 runs the one-account config
 * instead, once per variant in CHAOS_VARIANTS (default main,brokerage).
 */
const seed = chaosSeed();
const runs = Math.max(1, Number(process.env.CHAOS_RUNS ?? '1') || 1);
const accounts = longClusterChaos(seed, 'main').accounts;
const variants: ChaosVariant[] =
  accounts > 1 ? ['main'] : (process.env.CHAOS_VARIANTS ?? 'main,brokerage').split(',').map((v) => v.trim() as ChaosVariant);
const scenarios = Array.from({ length: runs }, (_, run) => variants.map((variant) => ({ run: run + 1, variant, seed: seed + 1000 * run }))).flat();

describe(`cluster chaos (seed ${seed}, ${runs} run(s), ${accounts} account(s))`, () => {
  it.each(scenarios)('run $run, seed $seed ($variant): nothing lost or duplicated, no stale commit', async ({ run, variant, seed: runSeed }) => {
    const options = longClusterChaos(runSeed, variant);
    const label = accounts > 1 ? `cluster-long-${accounts}-accounts` : options.label;
    const report = await runClusterChaos({ ...options, label: runs > 1 ? `${label}-run-${run}` : label }, (line) => console.log(line));
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
  });
});
