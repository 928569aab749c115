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
import { SimDocuments } from './documents.js';
import { createDocumentStorageHandler } from './document-storage.js';
import { MUTATOR_ACTOR } from './changes.js';
import { attachLoadDocument, removeLoadDocument } from './load-documents.js';
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
  }, (use) => {
    stats.current.retiredRefreshTokenUses++;
    if (use.lostAnswer) {
      stats.current.retiredRefreshTokenUsesAfterLostAnswer++;
      if (use.answerCutByFault) stats.current.retiredRefreshTokenUsesAfterCutAnswer++;
      else stats.current.lostRotationAnswersAtMs.push(use.retiredAtMs);
    }
  });
  const limiter = new RateLimiter(options.rateLimit);
  const faults = new FaultInjector(options.seed, () => options.faults);
  const mutator = new Mutator(
    options.seed,
    store,
    changes,
    () => options.invoiceLifecycle,
    () => options.mutator.lateWrites,
    () => {
      stats.current.lateWrites++;
    },
  );
  const documents = new SimDocuments(options.seed);
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
    documents,
  };
  const router = new Router(allRoutes, options.variant);
  let handle: SimulatorHandle | undefined;
  const server: Server = createServer(createRequestHandler(sim, router, createAdminHandler(() => handle as SimulatorHandle, clock)));
  server.keepAliveTimeout = 5_000;
  await listen(server, options.port);
  const port = (server.address() as AddressInfo).port;
  const storage: Server = createServer(createDocumentStorageHandler(documents, clock, () => stats.current));
  await listen(storage, 0);
  documents.origin = `http://127.0.0.1:${(storage.address() as AddressInfo).port}`;
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
    updateLoadLate: (ref, changes, lateMs) => {
      const p = store.loadPositionByRef(ref);
      if (p === undefined) throw new Error(`updateLoadLate: no load ${ref}`);
      // Never before the load's previous updatedAt: a write does not move a record back in time.
      const previous = Date.parse(String(store.loads.get(p)?.['updatedAt'] ?? ''));
      const stamp = Math.min(clock.now().getTime(), Math.max(clock.now().getTime() - lateMs, Number.isNaN(previous) ? -Infinity : previous + 1));
      return sim.changes.updateLoad(p, changes, MUTATOR_ACTOR, new Date(stamp).toISOString());
    },
    editPricing: (list, action, index = 0) => store.pricing.apply(list, action, () => index),
    truth: (resource) => truth(store, resource),
    eventTimings: () => store.events.records.map((r) => ({ _id: r._id, ...r.timing })),
    documentsOrigin: documents.origin,
    addDocument: (ref, type, spec = {}) => {
      const doc = attachLoadDocument(sim, ref, { type, fileName: spec.fileName ?? `${type.replace(/\W+/g, '-').toLowerCase()}.pdf`, bytes: spec.bytes }, MUTATOR_ACTOR);
      return documents.truthOf(doc);
    },
    removeDocument: (ref, url) => removeLoadDocument(sim, ref, url, MUTATOR_ACTOR),
    failDocumentDownloads: (count) => {
      documents.failNext = count;
    },
    documents: () => [...documents.truth()],
    revokeRefreshTokens: () => auth.revokeRefreshTokens(),
    close: async () => {
      if (closed) return;
      closed = true;
      mutator.stop();
      sender.close();
      await Promise.all(
        [server, storage].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
  return handle;
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
