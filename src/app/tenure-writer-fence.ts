import os from 'node:os';
import path from 'node:path';
import type { WriterFence } from '../contracts/index.js';
import type { Fence } from '../state/leases/index.js';
import type { StateLocation } from '../state/state-location.js';

/**
 * The account lease an app's connectors write under (ConnectorContext.writerFence): each tenure
 * of the lease — the daemon's, a one-shot command's — sets it when its work starts, with a `held`
 * that turns false when the tenure is cut, passes its deadline on this process's clock, or ends.
 * Undefined before the first tenure. The connectors are created once per app; tenures come and go.
 */
export class TenureWriterFence {
  private current: WriterFence | undefined;

  constructor(private readonly location: StateLocation) {}

  /** What connectors are given: the current tenure's fence. */
  readonly get = (): WriterFence | undefined => this.current;

  begin(fence: Fence, held: () => boolean): void {
    this.current = { scope: leaseScope(this.location, fence), epoch: fence.epoch, held };
  }
}

const LOOPBACK = new Set(['', 'localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Names the lease row a fence's epoch counts in, for every process that could meet it on a
 * shared drop: only epochs of one row may be compared, and a later one takes a writer lock over.
 * A SQLite file, or a PostgreSQL server reached on loopback or a socket, is this host's own —
 * another host's file or server at the same path holds other epochs — so the host name is part of
 * the name there. Replicas that name one server differently (an IP and a host name) get different
 * scopes: they then wait for each other's locks as writers without a lease do — slower, never unsafe.
 */
export function leaseScope(location: StateLocation, fence: Fence): string {
  if (location.kind === 'sqlite') return `sqlite:${os.hostname()}:${path.resolve(location.path)}#${fence.account}`;
  const url = new URL(location.url);
  const local = LOOPBACK.has(url.hostname) || url.searchParams.has('host');
  const server = `${local ? `${os.hostname()}:` : ''}${url.host}${url.pathname}`;
  return `postgres:${server}/${fence.leaseSchema ?? location.schema}#${fence.account}`;
}
