/**
 * How many account leases one replica should hold: about its share of the due accounts among the
 * live replicas (rounded up, so together they cover every account), never more than `cap`.
 */
export function fairShareTarget(dueAccounts: number, liveReplicas: number, cap = Number.POSITIVE_INFINITY): number {
  if (dueAccounts <= 0) return 0;
  return Math.min(Math.ceil(dueAccounts / Math.max(1, liveReplicas)), Math.max(0, cap));
}

/** How many more leases to claim now: the target minus what the replica holds already. */
export function claimBudget(target: number, held: number): number {
  return Math.max(0, target - held);
}
