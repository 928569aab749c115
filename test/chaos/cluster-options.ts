import { longChaos, shortChaos, type ChaosVariant } from './chaos-options.js';
import type { ClusterChaosOptions } from './run-cluster-chaos.js';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name}: expected a number, got "${raw}"`);
  return n;
}

/**
 * The short cluster form inside `npm test` (≤ ~90 s on 2 cores): 3 replicas, 1,000 loads, 2 kills,
 * 1 stop/cont, 1 connection termination, main only. `killAfterMs` is the pause before each action.
 */
export function shortClusterChaos(seed: number): ClusterChaosOptions {
  return {
    ...shortChaos(seed, 'main'),
    label: 'cluster-short-main',
    loads: 1000,
    kills: 2,
    stops: 1,
    terminations: 1,
    killAfterMs: [1500, 3500],
    inboxCreates: 12,
    stagingCreates: 8,
    logLevel: 'info',
    replicas: 3,
    // CLUSTER_ACCOUNTS=10: ten accounts (each its own simulator), the loads shared among them.
    accounts: envNumber('CLUSTER_ACCOUNTS', 1),
    leaseTtlMs: 4000,
    claimIntervalMs: 1000,
  };
}

/**
 * `npm run chaos:cluster`: 10 accounts (the "at least 10", main and brokerage alternating),
 * 7–13 minutes on 2 cores. CLUSTER_ACCOUNTS / CLUSTER_KILLS / CLUSTER_STOPS / CHAOS_LOADS size it.
 */
export function longClusterChaos(seed: number, variant: ChaosVariant): ClusterChaosOptions {
  return {
    ...longChaos(seed, variant),
    label: `cluster-long-${variant}`,
    loads: envNumber('CHAOS_LOADS', 2000),
    kills: envNumber('CLUSTER_KILLS', 6),
    stops: envNumber('CLUSTER_STOPS', 2),
    terminations: envNumber('CLUSTER_TERMINATIONS', 2),
    killAfterMs: [1500, 6000],
    inboxCreates: 60,
    stagingCreates: 40,
    logLevel: 'info',
    replicas: 3,
    accounts: envNumber('CLUSTER_ACCOUNTS', 10),
    leaseTtlMs: 4000,
    claimIntervalMs: 1000,
  };
}
