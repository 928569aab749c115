import { createServer } from 'node:net';
import path from 'node:path';
import { openApp, type AppContext } from '../../src/app/app-context.js';
import { runDaemon } from '../../src/app/daemon.js';
import { DAEMON_SERVICES } from '../../src/app/daemon-services.js';
import type { FreightSyncConfig } from '../../src/config/types.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';

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
  /** Resolves when runDaemon returned (after stop). */
  done: Promise<void>;
  /** First SIGTERM equivalent: drain, then resolve once everything stopped and the app is closed. */
  stop(): Promise<void>;
}

/** `freight-sync run` in-process: the real daemon with every registered service. */
export async function startDaemon(
  config: FreightSyncConfig,
  dir: string,
  options: { runOnStart?: boolean; logger?: Logger } = {},
): Promise<RunningDaemon> {
  const logger = options.logger ?? silentLogger();
  const stopper = new AbortController();
  const aborter = new AbortController();
  const app = await openApp({ config, filePath: path.join(dir, 'test.yaml'), baseDir: dir }, { logger, withConnectors: true, signal: aborter.signal });
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const done = (async () => {
    try {
      // Services start before the scheduler; the "daemon running" line is logged once all are up.
      const watcher = setInterval(() => {
        if (app.config.http.enabled || app.config.webhooks.enabled) void probe(app).then((ok) => ok && started());
        else started();
      }, 20);
      try {
        await runDaemon(app, { stopSignal: stopper.signal, abortSignal: aborter.signal, runOnStart: options.runOnStart ?? false, services: DAEMON_SERVICES });
      } finally {
        clearInterval(watcher);
        started();
      }
    } finally {
      await app.close();
    }
  })();
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('daemon did not come up within 20 s (is the service registered in DAEMON_SERVICES?)')), 20_000).unref());
  await Promise.race([ready, timeout]);
  return {
    app,
    done,
    async stop() {
      stopper.abort();
      const timer = setTimeout(() => aborter.abort(), 10_000);
      try {
        await done;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

async function probe(app: AppContext): Promise<boolean> {
  const listen = app.config.http.enabled ? app.config.http.listen : app.config.webhooks.listen;
  const url = `http://${listen}${app.config.http.enabled ? '/healthz' : app.config.webhooks.path}`;
  try {
    const response = await fetch(url, { method: app.config.http.enabled ? 'GET' : 'OPTIONS' });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

export function webhookUrl(config: FreightSyncConfig): string {
  return `http://${config.webhooks.listen}${config.webhooks.path}`;
}

export function opsUrl(config: FreightSyncConfig, route: string): string {
  return `http://${config.http.listen}${route}`;
}
