import { ApiClient } from '../api/api-client.js';
import { combineClientEvents } from '../api/client-events.js';
import { listLoadDocumentTypes } from '../api/endpoints/loads.js';
import { AuthHealth } from '../api/auth-health.js';
import type { LoadedConfig } from '../config/load-config.js';
import { createConnectors, type ConnectorSet } from '../plugins/create-connectors.js';
import { openState } from '../state/database.js';
import { describeStateLocation, stateLocationOf, type StateLocation } from '../state/state-location.js';
import { TenureWriterFence } from './tenure-writer-fence.js';
import { migrateToLatest } from '../state/migrate.js';
import { createStores, type StateStores } from '../state/stores/index.js';
import { UsageError } from '../util/errors.js';
import { OpsMetrics } from '../ops/metrics.js';
import { mergedMetrics } from '../ops/merged-metrics.js';
import { ApiReachability } from '../ops/api-reachability.js';
import { HttpServers } from '../ops/http-servers.js';
import { Readiness, type ReadinessCheck } from '../ops/readiness.js';
import { opsHttpService } from '../ops/ops-service.js';
import { markEchoes } from '../outbound/echo-marks.js';
import type { NamedSource } from '../outbound/intake.js';
import { DispatchLease } from '../outbound/dispatch-lease.js';
import type { DryRunDeps } from '../outbound/dry-run.js';
import { createOutboundEngine, outboundSources, type OutboundEngine } from '../outbound/outbound-engine.js';
import { outboundService } from '../outbound/outbound-service.js';
import type { DeliveryHooks } from '../sync/delivery-hooks.js';
import type { StreamRunDeps, StreamRunSummary } from '../sync/stream-runner.js';
import { flushSinks } from '../sync/sink-ack.js';
import type { Logger } from '../util/logger.js';
import { webhookProcessingService, webhookReceiverService } from '../webhooks/webhook-service.js';
import type { WebhookProcessor } from '../webhooks/processor.js';
import { ReceiptClock } from '../webhooks/receipt-clock.js';
import { LeaseStore, ReplicaStore, describeHolder, newHolderId, parseHolderId, type Fence } from '../state/leases/index.js';
import { processAlive } from '../util/process-alive.js';
import { accountLeaseService, type AccountLeaseService } from './account-lease-service.js';
import { replicaPresenceService } from './replica-presence.js';
import type { ScheduleView } from './console-data.js';
import { formatIsoDuration } from '../util/duration.js';
import os from 'node:os';
import type { DaemonService } from './daemon.js';
import { deploymentReadyLine, readyLine } from './ready-line.js';
import { schedulerService, StreamScheduler } from './stream-scheduler.js';
import { reconcileService } from '../reconcile/reconcile-service.js';
import { reconcileApp } from './reconcile.js';
import { resolveStreams } from './stream-settings.js';
import { fileStoresFor, filesConnectorOf } from './file-stores.js';
import { streamsSentTo } from './validate-deployment.js';
import { buildInfo } from './build-info.js';
import { daemonOwnershipService } from './daemon-ownership.js';
import type { AppContext } from './app-context.js';
import { composeWebhookProcessor, supervisionOf, type Supervision } from './compose-webhooks.js';
import { consoleData } from './console-data.js';

export type { AppContext } from './app-context.js';
export { composeWebhookProcessor } from './compose-webhooks.js';
import { composeNotifications, ReconcileResults } from './compose-notifications.js';


/** The shortest token refresh lock the daemon uses (see createApiClient's refreshLockTtlMs). */
const MIN_REFRESH_LOCK_TTL_MS = 30_000;
/** Connections of the lease pool per process: claims and renewals are short, but a renewal may wait for a fenced commit's row lock, so not one. */
const LEASE_POOL_SIZE = 4;
/**
 * The composition root: the one place that constructs stores and services. `openApp` builds what
 * every command needs from the config (state database and its stores, API client, connectors,
 * metrics) and closes it in reverse order of creation; `composeOutbound` and
 * `composeDaemonServices` build the parts of `push` and `run` from it, each part receiving only
 * the narrow dependencies its factory asks for. Lower layers never see this object.
 */

export interface OpenAppOptions {
  logger: Logger;
  /** Create and init the sink connectors of the selected streams (not needed by `status`). */
  withConnectors: boolean;
  /** Limit to these streams (`--stream`). */
  streams?: readonly string[];
  /** Also create the outbound source connectors (default: when outbound is enabled). */
  withSources?: boolean;
  signal?: AbortSignal;
}

export async function openApp(loaded: LoadedConfig, options: OpenAppOptions): Promise<AppContext> {
  const { config } = loaded;
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        options.logger.warn({ err: error }, 'cleanup failed');
      }
    }
  };
  const accountName = loaded.account?.name;
  const logger = accountName === undefined ? options.logger : options.logger.child({ account: accountName });
  options = { ...options, logger };
  try {
    const streams = resolveStreams(config, options.streams);
    const stateLocation = stateLocationOf(config.state);
    const leaseSchema = loaded.account?.leaseSchema;
    if (leaseSchema !== undefined && stateLocation.kind === 'postgres') await migrateSharedSchema({ ...stateLocation, schema: leaseSchema, poolSize: 2 });
    const stateLogger = options.logger.child({ component: 'state' });
    const db = await openState(stateLocation, {
      onIdleError: (error) => stateLogger.warn({ err: error }, 'a pooled state database connection failed; it is replaced on the next query'),
      // A replica frozen inside a fenced transaction (GC pause, SIGSTOP, a paused VM) keeps its FOR KEY SHARE
      // lock on the lease row, and claimers skip locked rows: the account could never fail over.
      // The server ends such a session after the lease TTL (its commit would be refused by then anyway).
      idleInTransactionTimeoutMs: config.cluster.leaseTtl,
      // Several accounts: one pool (state.poolSize connections) for all of them, not one each.
      sharedPool: accountName !== undefined,
    });
    cleanups.push(() => db.destroy());
    await migrateToLatest(db, { location: describeStateLocation(stateLocation) });
    // On PostgreSQL the lease claims and renewals have a small pool of their own (shared by the
    // process's accounts): in the shared work pool a renewal queued behind the accounts' work and,
    // on a loaded host, answered after the replica's own deadline — 377 tenures cut in the
    // 10-account long cluster chaos run. SQLite has one writer connection either way.
    const leaseDb =
      stateLocation.kind === 'postgres'
        ? await openState(
            { ...stateLocation, poolSize: LEASE_POOL_SIZE },
            {
              onIdleError: (error) => stateLogger.warn({ err: error }, 'a pooled lease connection failed; it is replaced on the next query'),
              idleInTransactionTimeoutMs: config.cluster.leaseTtl,
              sharedPool: true,
              poolName: 'leases',
            },
          )
        : db;
    if (leaseDb !== db) cleanups.push(() => leaseDb.destroy());
    const stores = createStores(db);
    // Several accounts in one process: the process's own metrics are served once (by the deployment).
    const metrics = new OpsMetrics({ build: buildInfo(), processMetrics: accountName === undefined });
    if (accountName !== undefined) metrics.registry.setDefaultLabels({ account: accountName });
    const apiReachability = new ApiReachability();
    const authHealth = new AuthHealth();

    const client = new ApiClient({
      baseUrl: config.api.baseUrl,
      variant: config.api.variant,
      credentials: config.api.auth,
      requestEncoding: config.api.requestEncoding,
      tokenStore: stores.tokens,
      logger: options.logger.child({ component: 'api' }),
      timeoutMs: config.api.timeout,
      refreshBeforeExpiryMs: config.api.refreshBeforeExpiry,
      // A refresh lock left by a dead lease holder on another host frees no later than its lease
      // (issue 11), but never in less than 30 s: a holder slowed down past the lock's deadline (a
      // loaded machine, a short lease TTL) would let another process spend the refresh token its
      // call is rotating. One killed on this host frees it at once.
      refreshLockTtlMs: Math.max(config.cluster.leaseTtl, MIN_REFRESH_LOCK_TTL_MS),
      rateLimit: config.api.rateLimit,
      retry: {
        maxAttempts: config.api.retry.maxAttempts,
        maxElapsedMs: config.api.retry.maxElapsed,
        baseDelayMs: config.api.retry.baseDelay,
        maxDelayMs: config.api.retry.maxDelay,
      },
      userAgent: config.api.userAgent,
      events: combineClientEvents(metrics.apiClientEvents(), apiReachability.events(), authHealth.events()),
    });
    // Before the state database closes (cleanups run in reverse): a token rotation in flight is
    // the account's only live pair, stored there when it answers.
    cleanups.push(() => client.shutdown());

    // Set by each tenure of the account lease; drop writer locks record it (tenure-writer-fence.ts).
    const writerFence = new TenureWriterFence(stateLocation);
    let connectors: ConnectorSet | undefined;
    if (options.withConnectors) {
      // A stream's file store (documentFiles' filesTo) is created like its sinks.
      const needed = new Set(streams.flatMap((s) => [...s.sinks, ...[filesConnectorOf(s)].filter((n) => n !== undefined)]));
      if (options.withSources ?? config.outbound.enabled) for (const name of config.outbound.sources) needed.add(name);
      const block = Object.fromEntries(Object.entries(config.connectors).filter(([name]) => needed.has(name)));
      connectors = await createConnectors(block, {
        baseDir: loaded.baseDir,
        logger: options.logger.child({ component: 'connectors' }),
        variant: config.api.variant,
        streamsFor: (name) => streams.filter((s) => s.sinks.includes(name)).map((s) => s.definition.name),
        mappableFor: (name) => streamsSentTo(config, name, { enabledOnly: false }),
        signal: options.signal,
        writerFence: writerFence.get,
      });
      const set = connectors;
      cleanups.push(() => set.close());
    }

    const deps: StreamRunDeps = {
      stores,
      client,
      logger: options.logger,
      hooks: deliveryHooks(stores),
      files: fileStoresFor(streams, connectors),
      onRunFinished: (summary) => metrics.recordRun(summary),
    };
    metrics.bind({
      db,
      checkpoints: stores.checkpoints,
      quarantine: stores.quarantine,
      runs: stores.runs,
      streams: streams.filter((s) => !s.definition.pushOnly).map((s) => s.definition.name),
      now: () => client.clock.now(),
      apiStats: client.stats,
      reauth: { account: accountName ?? client.tokens.account, required: async () => (await client.tokens.reauthRequired()) !== undefined },
    });
    const account = {
      name: accountName,
      leaseKey: accountName ?? client.tokens.account,
      leases: new LeaseStore(leaseDb, { schema: leaseSchema }),
      leaseDb,
      leaseSchema,
      writerFence,
    };
    return {
      config,
      account,
      baseDir: loaded.baseDir,
      logger: options.logger,
      db,
      stores,
      client,
      streams,
      connectors,
      deps,
      metrics,
      apiReachability,
      authHealth,
      sinksFor(stream) {
        return stream.sinks.map((name) => {
          const handle = connectors?.get(name);
          const sink = handle?.instance.sink;
          if (!sink) throw new UsageError(`sync.streams.${stream.definition.name}.sinks: connector ${name} cannot receive records (no sink capability)`);
          return { name, sink: metrics.observeSink(stream.definition.name, name, sink) };
        });
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The shared schema of a deployment with several accounts on PostgreSQL (every account's lease,
 * the replicas): created and migrated like an account's own, so its tables exist before any
 * account claims. Concurrent openers are serialised by the migration lock.
 */
async function migrateSharedSchema(location: StateLocation): Promise<void> {
  const db = await openState(location);
  try {
    await migrateToLatest(db, { location: describeStateLocation(location) });
  } finally {
    await db.destroy();
  }
}

/**
 * What the outbound side adds to deliveries (the engine must not import outbound): pulled loads
 * this daemon pushed carry an echo mark, and pulled customers and consignees feed the outbound
 * customer directory in the same transaction as their checkpoint, so ERP codes resolve.
 */
function deliveryHooks(stores: StateStores): DeliveryHooks {
  return {
    enrich: (stream, records) => (stream === 'loads' ? markEchoes(stores.outbox, records) : Promise.resolve([...records])),
    inCommit: async (stream, records, tx) => {
      if (stream === 'customers' || stream === 'consignees') await tx.directory.remember(stream, records);
    },
  };
}

/**
 * The app of one lease tenure: every state write of its work through stores fenced by `fence`
 * (`stores`: tests' decorated ones), and every API write through `assertHeld` when given. The
 * daemon's tenures and the one-shot commands use it.
 */
export function fencedApp(app: AppContext, fence: Fence, stores: StateStores = createStores(app.db, { fence }), assertHeld?: () => void): AppContext {
  // `assertHeld` (the lease still held by this process's clock) runs before every API write.
  const client = assertHeld ? app.client.withSendGuard(() => assertHeld()) : app.client;
  return { ...app, client, stores, deps: { ...app.deps, client, stores, hooks: deliveryHooks(stores) } };
}

/** The outbound engine of `push` and `run` (`extraSources`: in-memory sources of tests). */
export function composeOutbound(
  app: AppContext,
  options: { abortSignal: AbortSignal; logger?: Logger; extraSources?: readonly NamedSource[]; supervision?: DaemonOptions['supervision'] },
): OutboundEngine {
  return createOutboundEngine({
    stores: app.stores,
    client: app.client,
    requestTimeoutMs: app.config.api.timeout,
    sources: sourcesOf(app, options.extraSources),
    config: app.config.outbound,
    variant: app.config.api.variant,
    // Frees no later than the account lease after its holder died (issue 11).
    lease: new DispatchLease(app.db, describeStateLocation(stateLocationOf(app.config.state)), app.config.cluster.leaseTtl),
    logger: options.logger ?? app.logger.child({ component: 'outbound' }),
    abortSignal: options.abortSignal,
    supervision: options.supervision ?? supervisionOf(app.config),
  });
}

/** The connectors of `outbound.sources` with their source capability, plus tests' in-memory ones. */
function sourcesOf(app: AppContext, extraSources?: readonly NamedSource[]): NamedSource[] {
  return outboundSources(
    app.config.outbound.sources,
    (name) => {
      const handle = app.connectors?.get(name);
      return { exists: handle !== undefined, source: handle?.instance.source };
    },
    extraSources,
  );
}

/** What `push --dry-run` needs: the sources, the stores (rehearsed, never changed) and the variant; no API client. */
export function composeDryRun(app: AppContext, options: { logger?: Logger; extraSources?: readonly NamedSource[] } = {}): DryRunDeps {
  return {
    stores: app.stores,
    sources: sourcesOf(app, options.extraSources),
    variant: app.config.api.variant,
    logger: options.logger ?? app.logger.child({ component: 'outbound', dryRun: true }),
  };
}

export interface DaemonOptions {
  /** First SIGTERM: finish the current batches, commit, stop. */
  stopSignal: AbortSignal;
  /** Second SIGTERM (or the grace period): abort in-flight work. */
  abortSignal: AbortSignal;
  /** Run every stream once at start instead of waiting for its first cron tick. */
  runOnStart: boolean;
  onRun?: (summary: StreamRunSummary) => void;
  /** Loop supervision; default: the config's `supervision` section. */
  supervision?: Supervision;
  /**
   * The stores a tenure of the account lease works with, fenced by its epoch. Default: the
   * state database's stores with the fence; tests decorate them (a store that breaks on cue).
   */
  tenureStores?: (fence: Fence) => StateStores;
}

/** The services of `freight-sync run` (see composeDaemon). */
export function composeDaemonServices(app: AppContext, options: DaemonOptions): DaemonService[] {
  return composeDaemon(app, options).services;
}

/**
 * The services of `freight-sync run` for one account (see composeDeploymentDaemon); `lease` is
 * that account's lease service.
 */
export function composeDaemon(app: AppContext, options: DaemonOptions): { services: DaemonService[]; ready: () => string; lease: AccountLeaseService } {
  const daemon = composeDeploymentDaemon([app], options);
  return { services: daemon.services, ready: daemon.ready, lease: daemon.leases[0]! };
}

/**
 * The services of `freight-sync run`, in start order (they stop in reverse), for every account of
 * the deployment (one app per account; a single-account config is a deployment of one). Outside
 * the account leases, on every replica: each account's state ownership (SQLite: one daemon per
 * file), the one ops server (it answers during the whole drain), this replica's presence
 * (PostgreSQL: fair share of the accounts) and each account's webhook receiver (a delivery may
 * reach any replica; the inbox is shared). Under each account's lease (one replica at a time,
 * every state write fenced by its epoch): notifications, webhook processing, outbound, reconcile
 * and the stream scheduler last (it stops first, so no new batch starts while the others drain).
 * Parts not configured are absent. `ready()` describes the started daemon in one line.
 */
export function composeDeploymentDaemon(apps: readonly AppContext[], options: DaemonOptions): { services: DaemonService[]; ready: () => string; leases: AccountLeaseService[] } {
  const first = apps[0];
  if (!first) throw new UsageError('run: the deployment has no account');
  const multi = apps.length > 1 || first.account.name !== undefined;
  const { config } = first;
  const services: DaemonService[] = [];
  const servers = new HttpServers(first.logger.child({ component: 'http' }));
  const location = stateLocationOf(config.state);
  const holder = newHolderId();
  // First to start, last to stop: on a SQLite file the state is owned by one daemon for its whole
  // life (a file per account). On PostgreSQL several replicas share it by design; the account
  // leases decide who works.
  if (location.kind === 'sqlite') {
    for (const app of apps) {
      services.push(daemonOwnershipService(app.stores.daemonOwner, { statePath: describeStateLocation(stateLocationOf(app.config.state)), logger: app.logger.child({ component: 'state-owner' }) }));
      services.push(takeOverAfterCrash(app.account.leases, app.account.leaseKey, app.logger.child({ component: 'lease' })));
    }
  }
  const presence =
    location.kind === 'postgres'
      ? replicaPresenceService({
          me: { id: holder, host: os.hostname(), pid: process.pid },
          // With several accounts these live in the shared schema: every account's lease counts.
          replicas: new ReplicaStore(first.account.leaseDb, { schema: first.account.leaseSchema }),
          leases: first.account.leases,
          accounts: () => apps.length,
          heartbeatMs: config.cluster.heartbeat,
          staleMs: config.cluster.heartbeat * 3,
          handOverEveryMs: config.cluster.claimInterval * 3,
          logger: first.logger.child({ component: 'replica' }),
        })
      : undefined;
  const accounts = apps.map((app) => {
    const tenure = new CurrentTenure();
    const account = app.account.leaseKey;
    const lease = accountLeaseService({
      account,
      holder,
      leases: app.account.leases,
      ttlMs: config.cluster.leaseTtl,
      claimIntervalMs: config.cluster.claimInterval,
      ...(presence ? { withinShare: (claim) => presence.withinShare(claim), shouldHandOver: () => presence.shouldHandOver() } : {}),
      stopSignal: options.stopSignal,
      abortSignal: options.abortSignal,
      logger: app.logger.child({ component: 'lease' }),
      work: (fence, signals) => {
        // API writes are fenced too, by this replica's clock (see TenureSignals.assertHeld).
        const { assertHeld, isHeld, ...tenureSignals } = signals;
        app.account.writerFence.begin(fence, isHeld);
        return tenureServices(fencedApp(app, fence, options.tenureStores?.(fence), assertHeld), { ...options, ...tenureSignals }, tenure);
      },
    });
    app.metrics.observeLease(account, () => ({ active: lease.state() === 'active', epoch: lease.epoch() }));
    return { app, tenure, lease };
  });
  if (config.http.enabled) {
    const checks = apps.flatMap((app) => readinessChecks(app, multi));
    services.push(
      opsHttpService({
        config: config.http,
        servers,
        readiness: new Readiness(checks, { ttlMs: config.http.readyCacheTtl, timeoutMs: config.http.checkTimeout }),
        metrics: multi ? mergedMetrics(apps.map((app) => app.metrics)) : first.metrics,
        logger: first.logger.child({ component: 'ops-http' }),
        stopSignal: options.stopSignal,
        abortSignal: options.abortSignal,
        // The console shows one account (a config with `accounts` refuses http.console.enabled).
        ...(config.http.console.enabled && !multi ? { console: consoleData(first, accounts[0]!.tenure) } : {}),
      }),
    );
  }
  if (presence) services.push(presence);
  for (const { app, tenure } of accounts) {
    if (!app.config.webhooks.enabled) continue;
    // A standby has not called this account's API: it stamps receipts with the holder's note of the API's clock.
    const receipts = new ReceiptClock(app.client.clock, app.stores.checkpoints);
    services.push(
      webhookReceiverService({
        config: app.config.webhooks,
        inbox: app.stores.webhookInbox,
        servers,
        metrics: app.metrics,
        logger: app.logger.child({ component: 'webhooks' }),
        now: () => receipts.now(),
        // Wakes this replica's processor when it holds the lease; the holder elsewhere polls the inbox.
        onStored: () => tenure.wakeProcessor(),
        stopSignal: options.stopSignal,
      }),
    );
  }
  for (const { lease } of accounts) services.push(lease);
  const standbyNote = `claims every ${formatIsoDuration(config.cluster.claimInterval)}`;
  const ready = () => {
    if (multi) {
      const states = accounts.map(({ app, lease }) => `${app.account.name} ${lease.state() === 'active' ? 'active' : 'standby'}`);
      const active = accounts.filter(({ lease }) => lease.state() === 'active').length;
      return deploymentReadyLine({ accounts: states, active, listening: servers.listening(), standbyNote });
    }
    const { app, tenure, lease } = accounts[0]!;
    const standby = lease.state() === 'active' ? undefined : `standby (another replica holds the work of this account; ${standbyNote})`;
    return readyLine({
      streams: app.streams,
      listening: servers.listening(),
      ticks: tenure.nextTicks(),
      runOnStart: options.runOnStart,
      outbound: config.outbound.enabled ? { sources: config.outbound.sources, pollIntervalMs: config.outbound.pollInterval } : null,
      ...(standby ? { standby } : {}),
    });
  };
  return { services, ready, leases: accounts.map((a) => a.lease) };
}

/**
 * The account's `/readyz` checks. With several accounts they are named after the account, and
 * only the state store gates readiness: one account's lost token or unreachable sink must not take
 * the replica (and with it every other account's webhooks) out of the load balancer; it is
 * reported in the body, in metrics and in `status`.
 */
function readinessChecks(app: AppContext, multi: boolean): ReadinessCheck[] {
  const suffix = multi ? `:${app.account.name}` : '';
  return [
    { name: `state${suffix}`, cached: false, run: () => app.stores.ping() },
    { name: `api${suffix}`, cached: true, advisory: multi, run: (signal) => apiReady(app, signal) },
    ...(app.connectors?.connectors ?? [])
      .filter((c) => typeof c.instance.check === 'function')
      .map((c) => ({ name: `connector${suffix}:${c.name}`, cached: true, advisory: multi, run: (signal: AbortSignal) => c.instance.check!(signal) })),
  ];
}

/**
 * One tenure's work services (see composeDaemon), built from an app whose stores are fenced by
 * the lease's epoch; signals are the tenure's (a lost lease aborts them at once).
 */
function tenureServices(app: AppContext, options: DaemonOptions, tenure: CurrentTenure): DaemonService[] {
  const { config } = app;
  const supervision = options.supervision ?? supervisionOf(config);
  const services: DaemonService[] = [];
  const scheduler = new StreamScheduler(
    { streams: app.streams, runDeps: app.deps, sinksFor: (s) => app.sinksFor(s), logger: app.logger },
    { stopSignal: options.stopSignal, abortSignal: options.abortSignal, runOnStart: options.runOnStart, onRun: options.onRun },
  );
  // First to start, last to stop: when a tenure ends (lease lost, or a drain) the sinks publish what
  // they staged and let go of their writer locks. A file drop's lock held by a live replica that
  // lost the lease kept the new holder waiting for it forever (cluster chaos, SIGSTOP/SIGCONT).
  services.push(sinkReleaseService(app));
  const reconcileResults = new ReconcileResults();
  // Started before the services that change state (it stops after them).
  const notifications = composeNotifications(app, { stopSignal: options.stopSignal, abortSignal: options.abortSignal, reconcile: reconcileResults });
  if (notifications) services.push(notifications);
  let processor: WebhookProcessor | undefined;
  if (config.webhooks.enabled) {
    processor = composeWebhookProcessor(app, supervision);
    services.push(
      webhookProcessingService({
        config: config.webhooks,
        client: app.client,
        inbox: app.stores.webhookInbox,
        checkpoints: app.stores.checkpoints,
        processor,
        metrics: app.metrics,
        logger: app.logger.child({ component: 'webhooks' }),
        stopSignal: options.stopSignal,
        abortSignal: options.abortSignal,
      }),
    );
  }
  if (config.outbound.enabled) {
    const logger = app.logger.child({ component: 'outbound' });
    services.push(
      outboundService({
        engine: composeOutbound(app, { abortSignal: options.abortSignal, logger, supervision }),
        pollIntervalMs: config.outbound.pollInterval,
        logger,
        stopSignal: options.stopSignal,
        abortSignal: options.abortSignal,
        // After a failover the dead replica's dispatcher lease frees at its expiry: wait for it.
        waitForDispatcherLease: true,
        ...supervision,
      }),
    );
  }
  if (config.reconcile.schedule) {
    const { schedule, streams, days, repair } = config.reconcile;
    services.push(
      reconcileService({
        schedule,
        run: (signal) => reconcileApp(app, { streams, days, repair, signal }),
        onReport: (report) => {
          app.metrics.recordReconcile(report);
          reconcileResults.record(report);
        },
        logger: app.logger.child({ component: 'reconcile' }),
        abortSignal: options.abortSignal,
      }),
    );
  }
  services.push(schedulerService(scheduler));
  tenure.begin(scheduler, processor);
  return services;
}

/**
 * On a SQLite file the daemon that owns the file (state-owner, started just before) is the only
 * one: a lease still held by a daemon is a killed predecessor's, freed at once instead of after
 * its TTL, so a restart right after a crash resumes the work immediately, as before leases
 * existed. A one-shot command (`sync`, `backfill`) whose process still runs keeps it: the daemon
 * claims it when the command releases it.
 */
function takeOverAfterCrash(leases: LeaseStore, account: string, logger: Logger): DaemonService {
  return {
    name: 'lease-takeover',
    async start() {
      const row = (await leases.live()).find((l) => l.account === account);
      if (row?.holder) {
        const oneShot = row.holderCommand !== null && row.holderCommand !== 'run';
        const { host, pid } = parseHolderId(row.holder);
        if (oneShot && host === os.hostname() && processAlive(pid)) {
          logger.info({ account, holder: row.holder }, `account ${account} is worked by ${describeHolder(row.holder, row.holderCommand)}; its work starts here when that releases the lease`);
        } else if ((await leases.forfeit(account, row.holder)) > 0) {
          logger.info({ account }, `freed the account lease ${describeHolder(row.holder, row.holderCommand)} still held (that process is gone)`);
        }
      }
      return { loops: new Promise<void>(() => undefined) };
    },
    async stop() {},
  };
}

/**
 * What the parts outside the lease (console, ready line, receiver) see of the current tenure's
 * scheduler and processor; nothing while this replica is in standby.
 */
class CurrentTenure implements ScheduleView {
  private scheduler: StreamScheduler | undefined;
  private processor: WebhookProcessor | undefined;

  begin(scheduler: StreamScheduler, processor: WebhookProcessor | undefined): void {
    this.scheduler = scheduler;
    this.processor = processor;
  }

  nextRunAt(stream: string): Date | null {
    return this.scheduler?.nextRunAt(stream) ?? null;
  }

  isRunning(stream: string): boolean {
    return this.scheduler?.isRunning(stream) ?? false;
  }

  nextTicks(): ReturnType<StreamScheduler['nextTicks']> {
    return this.scheduler?.nextTicks() ?? [];
  }

  wakeProcessor(): void {
    this.processor?.stored();
  }
}

/**
 * The `api` readiness check: a token can be had, and the API answered within
 * `http.apiUnreachableAfter` — judged from the daemon's own traffic; when there was none for that
 * long, one cheap call (`GET /load-document-type`) finds out. A 4xx answer counts as reachable.
 */
async function apiReady(app: AppContext, signal: AbortSignal): Promise<void> {
  // A lost account is not ready, and no probe call is made for it (it would only be refused).
  const mark = await app.client.tokens.reauthRequired();
  if (mark) throw new Error(`reauth_required: account ${app.client.tokens.account} since ${mark.since}: ${mark.reason}`);
  const windowMs = app.config.http.apiUnreachableAfter;
  const idle = app.apiReachability.idleMs();
  if (idle === undefined || idle >= windowMs / 2) {
    // Its outcome reaches the reachability record through the client's events; a failure is judged below.
    await listLoadDocumentTypes(app.client, signal).catch(() => undefined);
  }
  app.apiReachability.assertReachable(windowMs);
  await app.client.tokens.accessToken(signal);
}

/** Publishes the sinks' staged writes and releases their locks when the tenure's services stop. */
function sinkReleaseService(app: AppContext): DaemonService {
  let stopped!: () => void;
  const loops = new Promise<void>((resolve) => (stopped = resolve));
  return {
    name: 'sink-release',
    start: async () => ({ loops }),
    async stop() {
      const sinks = [...new Map(app.streams.flatMap((s) => app.sinksFor(s)).map((n) => [n.name, n] as const)).values()];
      // Bounded: a sink waiting on another process must not keep this replica from standing by.
      for (const failure of await flushSinks(sinks, AbortSignal.timeout(app.config.cluster.leaseTtl))) app.logger.warn(failure);
      stopped();
    },
  };
}
