import type { Kysely } from 'kysely';
import type { ApiClient } from '../api/api-client.js';
import type { AuthHealth } from '../api/auth-health.js';
import type { FreightSyncConfig } from '../config/types.js';
import type { ApiReachability } from '../ops/api-reachability.js';
import type { OpsMetrics } from '../ops/metrics.js';
import type { ConnectorSet } from '../plugins/create-connectors.js';
import type { StateStores } from '../state/stores/index.js';
import type { StateTables } from '../state/tables.js';
import type { NamedSink, StreamRunDeps } from '../sync/stream-runner.js';
import type { Logger } from '../util/logger.js';
import type { ResolvedStream } from './stream-settings.js';

/**
 * What every command gets from `openApp` (src/app/compose.ts). In a file of its own so the app
 * modules that read it (status, rejected, the console's data) do not import the composition root
 * that composes them.
 */
export interface AppContext {
  config: FreightSyncConfig;
  baseDir: string;
  logger: Logger;
  /** For the app layer's own reports (status, metrics); parts get stores, never the database. */
  db: Kysely<StateTables>;
  stores: StateStores;
  client: ApiClient;
  streams: ResolvedStream[];
  connectors: ConnectorSet | undefined;
  deps: StreamRunDeps;
  /** Prometheus metrics on a dedicated registry (served by the ops server in `run`). */
  metrics: OpsMetrics;
  /** Whether the API answered recently, from the client's own traffic (`/readyz`). */
  apiReachability: ApiReachability;
  /** Whether the credentials last worked (notifications: authentication lost / recovered). */
  authHealth: AuthHealth;
  sinksFor(stream: ResolvedStream): NamedSink[];
  close(): Promise<void>;
}
