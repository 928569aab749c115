import { describe, expect, it } from 'vitest';
import { probePostgres, requireService } from '../helpers/services.js';
import { chaosSeed } from './chaos-options.js';
import { shortClusterChaos } from './cluster-options.js';
import { runClusterChaos } from './run-cluster-chaos.js';

/**
 * The short cluster chaos run, `npm run chaos:cluster:short` (the long form is `npm run
 * chaos:cluster`). Not part of `npm test` yet: it takes 2–5 minutes on a 2-core machine and has
 * not passed end to end yet (see the closing note of the session that added it). Three
 * `freight-sync run` replicas on PostgreSQL state; the lease holder SIGKILLed twice (restarted),
 * SIGSTOPped beyond the lease TTL once, its database connections terminated once. Requires
 * PostgreSQL (skipped loudly on a laptop without it, a failure under CI=true). CHAOS_SEED replays;
 * CLUSTER_ACCOUNTS=10 serves ten accounts (each its own simulator), killing the replica holding the most leases.
 */
const seed = chaosSeed();
const postgres = requireService('PostgreSQL (cluster chaos state)', await probePostgres());

describe.skipIf(!postgres)(`cluster chaos, short form (seed ${seed})`, () => {
  it('main: sinks equal the truth, outbound and webhooks once, failover within TTL + claim interval, no stale commit', async () => {
    const options = shortClusterChaos(seed);
    const report = await runClusterChaos(options, (line) => console.log(line));
    expect(report.kills).toBe(2);
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
    for (const a of report.actions.filter((x) => x.failover)) expect(a.failover!.claimMs, `${a.action} ${a.victim}`).toBeLessThanOrEqual(options.leaseTtlMs + options.claimIntervalMs + 1000);
  }, 480_000 + 60_000 * Math.max(0, shortClusterChaos(seed).accounts - 1));
});
