import { describe, expect, it } from 'vitest';
import { probePostgres, requireService } from '../helpers/services.js';
import { chaosSeed } from './chaos-options.js';
import { shortClusterChaos } from './cluster-options.js';
import { runClusterChaos } from './run-cluster-chaos.js';

/**
 * The short cluster chaos run, `npm run chaos:cluster:short` (the long form is `npm run
 * chaos:cluster`). With CLUSTER_ACCOUNTS=10 it takes 4–14 minutes on a 2-core machine; `npm test`
 * runs the one-account form (test/integration/cluster-chaos-short.test.ts). Three
 * `freight-sync run` replicas on PostgreSQL state; the lease holder SIGKILLed twice (restarted),
 * SIGSTOPped beyond the lease TTL once, its database connections terminated once. Requires
 * PostgreSQL (skipped loudly on a laptop without it, a failure under CI=true). CHAOS_SEED replays;
 * CLUSTER_ACCOUNTS=10 serves ten accounts (each its own simulator), killing the replica holding the most leases.
 */
const seed = chaosSeed();
const postgres = requireService('PostgreSQL (cluster chaos state)', await probePostgres());

describe.skipIf(!postgres)(`cluster chaos, short form (seed ${seed})`, () => {
  it('main: sinks equal the truth, outbound and webhooks once, no stale commit (failover times printed)', async () => {
    const options = shortClusterChaos(seed);
    const report = await runClusterChaos(options, (line) => console.log(line));
    expect(report.kills).toBe(2);
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
    // Failover time (goal: TTL + claim interval) is printed in the table above, not asserted: a
    // speed goal belongs in the bench (`npm run bench -- --only=failover`). Run 16 passed every
    // check with one account claimed 10.4 s after a SIGSTOP at load average 12 on 2 cores.
  }, 480_000 + 60_000 * Math.max(0, shortClusterChaos(seed).accounts - 1));
});
