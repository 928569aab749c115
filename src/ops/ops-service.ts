import type { HttpConfig } from '../config/types.js';
import type { DaemonServiceLike } from '../util/daemon-service.js';
import type { Logger } from '../util/logger.js';
import { sendJson, type HttpServers } from './http-servers.js';
import type { OpsMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

export interface OpsServiceDeps {
  config: HttpConfig;
  servers: HttpServers;
  readiness: Readiness;
  metrics: OpsMetrics;
  logger: Logger;
  stopSignal: AbortSignal;
}

const ROUTES = ['/healthz', '/readyz', '/metrics'] as const;

/**
 * The ops HTTP server of `run` (`http.listen`): `/healthz` (the process answers), `/readyz`
 * (state DB, API credentials, sinks; 503 with a JSON body naming what failed), `/metrics`
 * (Prometheus text from the app's dedicated registry).
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
      const address = await servers.listen(config.listen);
      (service as { port: number | undefined }).port = address.port;
      logger.info({ listen: `${address.address}:${address.port}` }, 'ops endpoints listening (/healthz, /readyz, /metrics)');
      // Served by the HTTP server: nothing here loops on its own.
      return { loops: new Promise<void>(() => undefined) };
    },
    async stop() {
      readiness.markStopping();
      for (const route of ROUTES) await servers.unmount(config.listen, route);
    },
  };
  return service;
}
