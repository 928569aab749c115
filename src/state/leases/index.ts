export { LeaseLostError, assertLeaseHeld, fencedWrite, isLeaseLostError, type Fence } from './fence.js';
export { LeaseStore, type ClaimOptions, type Lease, type LeaseRow } from './lease-store.js';
export { ReplicaStore, type ReplicaIdentity } from './replica-store.js';
export { claimBudget, fairShareTarget } from './fair-share.js';
