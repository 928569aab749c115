import type { Kysely } from 'kysely';
import type { ApiClient } from '../api/api-client.js';
import type { AuthHealth } from '../api/auth-health.js';
import type { FreightSyncConfig } from '../config/types.js';
import type { ApiReachability } from '../ops/api-reachability.js';
import type { OpsMetrics } from '../ops/metrics.js';
import type { ConnectorSet } from '../plugins/create-connectors.js';
import type { StateStores } from '../state/stores/index.js';
import type { LeaseStore } from '../state/leases/index.js';
import type { StateTables } from '../state/tables.js';
import type { NamedSink, StreamRunDeps } from '../sync/stream-runner.js';
import type { Logger } from '../util/logger.js';
import type { ResolvedStream } from './stream-settings.js';
import type { TenureWriterFence } from './tenure-writer-fence.js';

/**
 * What every command gets from `openApp` (src/app/compose.ts). In a file of its own so the app
 * modules that read it (status, rejected, the console's data) do not import the composition root
 * that composes them.
 */
/** Which API account an app serves, and where its lease lives. */
export interface AppAccount {
  /** The account's name in a config with `accounts`; undefined for a single-account config. */
  name: string | undefined;
  /** The key of its lease row: the name, or (single account) the token store's account key. */
  leaseKey: string;
  /** Its lease rows (the shared schema on PostgreSQL with several accounts, else its own state). */
  leases: LeaseStore;
  /** The state connection(s) of the lease and replica tables: on PostgreSQL a small pool apart from the work's. */
  leaseDb: Kysely<StateTables>;
  /** The schema of the shared lease and replica tables, when not the account's own. */
  leaseSchema: string | undefined;
  /** The lease tenure the app's connectors write under now (drop writer locks record it). */
  writerFence: TenureWriterFence;
}

export interface AppContext {
  config: FreightSyncConfig;
  account: AppAccount;
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
