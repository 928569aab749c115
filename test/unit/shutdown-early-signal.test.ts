import { afterEach, describe, expect, it } from 'vitest';
import { holdEarlyStopSignals, installShutdown, type Shutdown } from '../../src/app/shutdown.js';

/**
 * `freight-sync run` takes a second or more to load its modules and read its config; a SIGTERM in
 * that time (a rolling restart reaching a replica still starting, cluster chaos run 14) killed it
 * by the signal. The signal is now held until the daemon's handler is installed, which then stops
 * at once. `process.emit` calls the listeners as a real signal would, without signalling the
 * test process.
 */
describe('stop signals during start-up', () => {
  const installed: Shutdown[] = [];
  afterEach(() => {
    for (const s of installed.splice(0)) s.dispose();
  });

  it('a SIGTERM before installShutdown stops the daemon as soon as its handler is installed', () => {
    const before = process.listenerCount('SIGTERM');
    holdEarlyStopSignals();
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    process.emit('SIGTERM', 'SIGTERM');
    const shutdown = installShutdown({ graceMs: 60_000 });
    installed.push(shutdown);
    expect(shutdown.stopSignal.aborted).toBe(true);
    expect(String(shutdown.stopSignal.reason)).toContain('SIGTERM received');
    // The grace period has not passed: in-flight work is not aborted, and the early listener is gone.
    expect(shutdown.abortSignal.aborted).toBe(false);
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
  });

  it('without an early signal nothing is stopped, and a later signal works as before', () => {
    holdEarlyStopSignals();
    const shutdown = installShutdown({ graceMs: 60_000 });
    installed.push(shutdown);
    expect(shutdown.stopSignal.aborted).toBe(false);
    process.emit('SIGTERM', 'SIGTERM');
    expect(shutdown.stopSignal.aborted).toBe(true);
    process.emit('SIGTERM', 'SIGTERM');
    expect(shutdown.abortSignal.aborted).toBe(true);
  });
});
