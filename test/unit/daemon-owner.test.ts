import { describe, expect, it } from 'vitest';
import { ownerAlive, type DaemonOwner } from '../../src/state/stores/index.js';

const now = Date.parse('2026-06-01T12:00:00Z');
const owner = (over: Partial<DaemonOwner>): DaemonOwner => ({
  holder: 'h',
  host: 'this-host',
  pid: process.ppid,
  startedAt: '2026-06-01T10:00:00Z',
  heartbeatAt: new Date(now - 5_000).toISOString(),
  ...over,
});

describe('ownerAlive: a dead daemon never blocks reset for long', () => {
  it('same host: alive while its pid exists and its heartbeat is fresh; a gone pid frees it at once', () => {
    expect(ownerAlive(owner({}), { now, staleAfterMs: 60_000, host: 'this-host' })).toBe(true);
    // A pid that cannot exist (above the kernel's pid_max).
    expect(ownerAlive(owner({ pid: 2 ** 30 }), { now, staleAfterMs: 60_000, host: 'this-host' })).toBe(false);
  });

  it('same host and our own pid: an earlier incarnation (a container restarted as pid 1), not a live owner', () => {
    expect(ownerAlive(owner({ pid: process.pid }), { now, staleAfterMs: 60_000, host: 'this-host' })).toBe(false);
  });

  it('another host: alive until its heartbeat is older than the staleness limit', () => {
    expect(ownerAlive(owner({ host: 'other', pid: 2 ** 30 }), { now, staleAfterMs: 60_000, host: 'this-host' })).toBe(true);
    expect(ownerAlive(owner({ host: 'other', heartbeatAt: new Date(now - 61_000).toISOString() }), { now, staleAfterMs: 60_000, host: 'this-host' })).toBe(false);
    expect(ownerAlive(owner({ host: 'other', heartbeatAt: 'garbage' }), { now, staleAfterMs: 60_000, host: 'this-host' })).toBe(false);
  });
});
