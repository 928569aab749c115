import type { AuthService } from './auth.js';
import type { Changes } from './changes.js';
import type { ServerClock } from './clock.js';
import type { SimDocuments } from './documents.js';
import type { FaultInjector } from './faults.js';
import type { SimulatorOptions } from './options.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SimulatorStats } from './stats.js';
import type { SimStore } from './store.js';
import type { WebhookSender } from './webhook-sender.js';

/** Everything a route handler may touch. `options` is live: `configure` mutates it. */
export interface SimContext {
  options: SimulatorOptions;
  clock: ServerClock;
  store: SimStore;
  changes: Changes;
  auth: AuthService;
  stats: SimulatorStats;
  faults: FaultInjector;
  limiter: RateLimiter;
  sender: WebhookSender;
  /** Files behind load documents, served on their own origin (document-storage.ts). */
  documents: SimDocuments;
}
