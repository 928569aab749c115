import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminHandler } from './admin.js';
import { AuthService } from './auth.js';
import { Changes } from './changes.js';
import { ServerClock } from './clock.js';
import { FaultInjector } from './faults.js';
import type { SimulatorHandle } from './handle.js';
import { Mutator } from './mutator.js';
import { configurePatchSchema, parseSimulatorOptions, type ConfigurePatch, type SimulatorOptions } from './options.js';
import { RateLimiter } from './rate-limiter.js';
import { Router } from './router.js';
import { allRoutes } from './routes/index.js';
import { ADMIN_PREFIX, API_PREFIX, createRequestHandler } from './server.js';
import type { SimContext } from './sim-context.js';
import { cloneStats, emptyStats } from './stats.js';
import { SimStore } from './store.js';
import { truth } from './truth.js';
import { WebhookSender } from './webhook-sender.js';
import { reshapeWebhookBody } from './real-shapes.js';

/** Starts the simulator on 127.0.0.1 and resolves once it listens. */
export async function startSimulator(input: Partial<SimulatorOptions> = {}): Promise<SimulatorHandle> {
  const options = parseSimulatorOptions(input);
  const clock = new ServerClock(options.clockOffsetMs);
  const store = new SimStore(options, clock);
  const stats = { current: emptyStats() };
  const sender = new WebhookSender(() => options.webhooks, store.events, () => stats.current, (body) => (options.realShapes ? reshapeWebhookBody(body) : body));
  store.events.listener = (record) => sender.enqueue(record);
  const changes = new Changes(store, () => options.webhooks?.url ?? null);
  const auth = new AuthService(clock, { clientId: options.clientId, clientSecret: options.clientSecret }, () => options.accessTokenTtlMs, () => {
    stats.current.tokensIssued++;
  }, () => {
    stats.current.retiredRefreshTokenUses++;
  });
  const limiter = new RateLimiter(options.rateLimit);
  const faults = new FaultInjector(options.seed, () => options.faults);
  const mutator = new Mutator(options.seed, store, changes, () => options.invoiceLifecycle);
  const sim: SimContext = {
    options,
    clock,
    store,
    changes,
    auth,
    get stats() {
      return stats.current;
    },
    faults,
    limiter,
    sender,
  };
  const router = new Router(allRoutes, options.variant);
  let handle: SimulatorHandle | undefined;
  const server: Server = createServer(createRequestHandler(sim, router, createAdminHandler(() => handle as SimulatorHandle, clock)));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  if (options.mutator.enabled) mutator.start(options.mutator.intervalMs, options.mutator.perTick);

  let closed = false;
  handle = {
    baseUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    adminUrl: `http://127.0.0.1:${port}${ADMIN_PREFIX}`,
    options,
    now: () => clock.now(),
    advance: (ms: number) => clock.advance(ms),
    webhooksIdle: () => sender.idle(),
    stats: () => cloneStats(stats.current),
    resetStats: () => {
      stats.current = emptyStats();
    },
    configure: (patch: ConfigurePatch) => {
      const parsed = configurePatchSchema.parse(patch);
      Object.assign(options, parsed);
      if ('rateLimit' in parsed) limiter.reconfigure(options.rateLimit);
      if (parsed.clockOffsetMs !== undefined) clock.offsetMs = parsed.clockOffsetMs;
      if (parsed.mutator) {
        if (options.mutator.enabled) mutator.start(options.mutator.intervalMs, options.mutator.perTick);
        else mutator.stop();
      }
    },
    mutate: async (count: number) => {
      mutator.run(count);
    },
    editPricing: (list, action, index = 0) => store.pricing.apply(list, action, () => index),
    truth: (resource) => truth(store, resource),
    revokeRefreshTokens: () => auth.revokeRefreshTokens(),
    close: async () => {
      if (closed) return;
      closed = true;
      mutator.stop();
      sender.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return handle;
}
