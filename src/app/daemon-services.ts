import type { DaemonServiceFactory } from './daemon.js';

/**
 * Services `freight-sync run` starts besides the stream scheduler, in start order (they stop in
 * reverse). Each factory returns undefined when its part is not configured.
 */
export const DAEMON_SERVICES: DaemonServiceFactory[] = [];
