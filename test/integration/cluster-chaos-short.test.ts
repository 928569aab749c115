import { describe, expect, it } from 'vitest';
import { chaosSeed } from '../chaos/chaos-options.js';
import { shortClusterChaos } from '../chaos/cluster-options.js';
import { runClusterChaos } from '../chaos/run-cluster-chaos.js';
import { probePostgres, requireService } from '../helpers/services.js';

/**
 * The cluster chaos run inside `npm test` (issue 11, item 7): three `freight-sync run` replicas
 * (child processes of the built CLI) on PostgreSQL state serving one account, while the simulator
 * mutates, faults, rate-limits, expires tokens and runs a skewed clock, and ERP creates arrive;
 * the lease holder is SIGKILLed twice (and restarted), SIGSTOPped beyond the lease TTL once and
 * has its database connections terminated once. Afterwards every sink equals the truth, every
 * ERP create exists once, every webhook event was processed once, no stale epoch committed and
 * no checkpoint moved back. The ten-account form is `CLUSTER_ACCOUNTS=10 npm run
 * chaos:cluster:short`, the long form `npm run chaos:cluster`. CHAOS_SEED replays a run.
 */
const seed = chaosSeed();
const postgres = requireService('PostgreSQL (cluster chaos state)', await probePostgres());

describe.skipIf(!postgres)(`cluster chaos, short form, one account (seed ${seed})`, () => {
  it('main: sinks equal the truth, outbound and webhooks once, no stale commit, no checkpoint backwards', async () => {
    const report = await runClusterChaos({ ...shortClusterChaos(seed), accounts: 1 }, (line) => console.log(line));
    expect(report.kills).toBe(2);
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
  }, 480_000);
});
