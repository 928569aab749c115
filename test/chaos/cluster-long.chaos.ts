import { describe, expect, it } from 'vitest';
import { chaosSeed, type ChaosVariant } from './chaos-options.js';
import { longClusterChaos } from './cluster-options.js';
import { runClusterChaos } from './run-cluster-chaos.js';

/**
 * `npm run chaos:cluster`: 3 `freight-sync run` replicas on PostgreSQL state, the lease holder
 * SIGKILLed and restarted, SIGSTOPped beyond the TTL and SIGCONTed, its database connections
 * terminated; then every sink against the truth, outbound and webhooks exactly once, no retired
 * refresh token used, epochs and checkpoints never backwards, no commit by a non-holder.
 * CLUSTER_ACCOUNTS=N serves N accounts instead (an `accounts:` config, one simulator and set of
 * sinks each, main and brokerage alternating; the replica holding the most leases is the victim).
 */
const seed = chaosSeed();
const variants = (process.env.CHAOS_VARIANTS ?? 'main,brokerage').split(',').map((v) => v.trim()) as ChaosVariant[];

describe(`cluster chaos (seed ${seed})`, () => {
  it.each(variants)('%s: one account across 3 replicas, nothing lost or duplicated, no stale commit', async (variant) => {
    const report = await runClusterChaos(longClusterChaos(seed, variant), (line) => console.log(line));
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
  });
});
