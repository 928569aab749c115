import type { DaemonServiceFactory } from './daemon.js';
import { outboundService } from '../outbound/outbound-service.js';
import { opsHttpService } from '../ops/ops-service.js';
import { webhookService } from '../webhooks/webhook-service.js';

/**
 * Services `freight-sync run` starts besides the stream scheduler, in start order (they stop in
 * reverse). Each factory returns undefined when its part is not configured.
 */
// The ops server (/healthz, /readyz, /metrics) starts first and stops last, so it answers
// during the whole drain.
export const DAEMON_SERVICES: DaemonServiceFactory[] = [opsHttpService, webhookService, outboundService];
