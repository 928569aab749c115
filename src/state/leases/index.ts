export { LeaseLostError, assertLeaseHeld, fencedWrite, isLeaseLostError, type Fence } from './fence.js';
export { LeaseStore, type ClaimOptions, type HandOverRequest, type Lease, type LeaseRow, type RequestOutcome } from './lease-store.js';
export { ReplicaStore, type ReplicaIdentity } from './replica-store.js';
export { claimBudget, fairShareTarget } from './fair-share.js';
export { describeHolder, newHolderId, parseHolderId } from './holder-id.js';
export { LeaseBusyError } from './lease-busy-error.js';
