import { createServer } from 'node:net';
import path from 'node:path';
import { composeDaemonServices, openApp, type AppContext, type DaemonOptions } from '../../src/app/compose.js';
import type { Fence } from '../../src/state/leases/index.js';
import { createStores } from '../../src/state/stores/index.js';
import { startDaemon as startRunner, type DaemonRunner } from '../../src/app/daemon.js';
import type { FreightSyncConfig } from '../../src/config/types.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';
import { pullConfig } from './pull-harness.js';

/** A free loopback port (bound and released; fine for tests on one machine). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningDaemon {
  app: AppContext;
  runner: DaemonRunner;
  /** Settles when the runner ended and the app is closed: rejects when a service loop died. */
  done: Promise<void>;
  /** First SIGTERM equivalent: drain, then resolve once everything stopped and the app is closed. */
  stop(): Promise<void>;
}

/**
 * `freight-sync run` in-process: the real daemon with every configured service, composed as the
 * CLI composes it. Resolves once every service is up (the runner's start), so nothing polls.
 */
export async function startDaemon(
  config: FreightSyncConfig,
  dir: string,
  options: { runOnStart?: boolean; logger?: Logger; supervision?: DaemonOptions['supervision']; wrapApp?: (app: AppContext) => AppContext } = {},
): Promise<RunningDaemon> {
  const logger = options.logger ?? silentLogger();
  const stopper = new AbortController();
  const aborter = new AbortController();
  const opened = await openApp({ config, filePath: path.join(dir, 'test.yaml'), baseDir: dir }, { logger, withConnectors: true, signal: aborter.signal });
  const app = options.wrapApp ? options.wrapApp(opened) : opened;
  let runner: DaemonRunner;
  try {
    const wrapApp = options.wrapApp;
    const services = composeDaemonServices(app, {
      stopSignal: stopper.signal,
      abortSignal: aborter.signal,
      runOnStart: options.runOnStart ?? false,
      supervision: options.supervision,
      // The stores a tenure of the account lease works with get the same decoration as the app's.
      ...(wrapApp ? { tenureStores: (fence: Fence) => wrapApp({ ...opened, stores: createStores(opened.db, { fence }) }).stores } : {}),
    });
    runner = await startRunner({ services, logger });
  } catch (error) {
    await opened.close();
    throw error;
  }
  const done = runner.promise.finally(() => opened.close());
  done.catch(() => undefined);
  return {
    app,
    runner,
    done,
    async stop() {
      stopper.abort();
      const timer = setTimeout(() => aborter.abort(), 10_000);
      try {
        await runner.stop();
        await done.catch(() => undefined);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export function webhookUrl(config: FreightSyncConfig): string {
  return `http://${config.webhooks.listen}${config.webhooks.path}`;
}

export function opsUrl(config: FreightSyncConfig, route: string): string {
  return `http://${config.http.listen}${route}`;
}

/**
 * A daemon whose polling is off (a yearly cron), so everything in its sinks came through the
 * webhook path, with the simulator already sending it signed webhooks. CSV sink in `dir/out`.
 */
export async function startWebhookDaemon(sim: SimulatorHandle, options: { dir: string; secret: string; streams: string[] }): Promise<RunningDaemon> {
  const config = pullConfig({
    sim,
    dir: options.dir,
    streams: options.streams,
    streamSettings: { schedule: '0 0 1 1 *' },
    raw: {
      webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: options.secret, catchUpInterval: 'PT0S' },
      http: { listen: `127.0.0.1:${await freePort()}` },
    },
  });
  const daemon = await startDaemon(config, options.dir);
  sim.configure({ webhooks: { url: webhookUrl(config), secret: options.secret } });
  return daemon;
}
