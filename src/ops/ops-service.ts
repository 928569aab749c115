import type { HttpConfig } from '../config/types.js';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import type { Logger } from '../util/logger.js';
import { consoleHandler } from './console/console-handler.js';
import type { ConsoleData } from './console/console-data.js';
import { CONSOLE_PREFIX } from './console/layout.js';
import { sendJson, type HttpServers } from './http-servers.js';
import type { MetricsEndpoint } from './merged-metrics.js';
import type { Readiness } from './readiness.js';

export interface OpsServiceDeps {
  config: HttpConfig;
  servers: HttpServers;
  readiness: Readiness;
  metrics: MetricsEndpoint;
  logger: Logger;
  stopSignal: AbortSignal;
  /** What the web console shows (mounted when `http.console.enabled`). */
  console?: ConsoleData;
  /** Aborts an action the console is carrying out (a retry delivering) on shutdown. */
  abortSignal?: AbortSignal;
}

const ROUTES = ['/healthz', '/readyz', '/metrics'] as const;

/**
 * The ops HTTP server of `run` (`http.listen`): `/healthz` (the process answers), `/readyz`
 * (state DB, API credentials, sinks; 503 with a JSON body naming what failed), `/metrics`
 * (Prometheus text from the app's dedicated registry), `/console/` (the web console, when
 * enabled) and `/`: a redirect to the console, or a short index naming the endpoints.
 */
export function opsHttpService(deps: OpsServiceDeps): DaemonServiceLike & { readonly port: number | undefined } {
  const { config, servers, readiness, logger, stopSignal, metrics } = deps;
  // Not ready from the first SIGTERM on, while the endpoints still answer during the drain.
  stopSignal.addEventListener('abort', () => readiness.markStopping(), { once: true });
  const service: DaemonServiceLike & { readonly port: number | undefined } = {
    name: 'ops-http',
    port: undefined,
    async start() {
      servers.mount(config.listen, '/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
      servers.mount(config.listen, '/readyz', async (_req, res) => {
        const report = await readiness.evaluate();
        if (!report.ready) logger.debug({ checks: report.checks }, 'not ready');
        sendJson(res, report.ready ? 200 : 503, { status: report.ready ? 'ready' : 'not ready', ...report });
      });
      servers.mount(config.listen, '/metrics', async (_req, res) => {
        const { contentType, body } = await metrics.render();
        res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
        res.end(body);
      });
      const consoleOn = config.console.enabled && deps.console !== undefined;
      if (consoleOn) {
        servers.mountPrefix(
          config.listen,
          CONSOLE_PREFIX,
          consoleHandler({ config: config.console, data: deps.console!, logger: logger.child({ component: 'console' }), signal: deps.abortSignal ?? stopSignal }),
        );
      }
      servers.mount(config.listen, '/', (_req, res) => {
        if (consoleOn) {
          res.writeHead(302, { Location: CONSOLE_PREFIX, 'Content-Length': 0, 'Cache-Control': 'no-store' });
          res.end();
          return;
        }
        sendJson(res, 200, { service: 'freight-sync', endpoints: [...ROUTES], console: 'off (http.console.enabled)' });
      });
      const address = await servers.listen(config.listen);
      (service as { port: number | undefined }).port = address.port;
      logger.info(
        { listen: `${address.address}:${address.port}` },
        `ops endpoints listening (/healthz, /readyz, /metrics${consoleOn ? ', console at /console/' : ''})`,
      );
      // Served by the HTTP server: nothing here loops on its own.
      return { loops: new Promise<void>(() => undefined) };
    },
    async stop() {
      readiness.markStopping();
      for (const route of [...ROUTES, '/', CONSOLE_PREFIX]) await servers.unmount(config.listen, route);
    },
  };
  return service;
}
