import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FreightSyncError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** A listen address could not be bound (port taken, bad host). */
export class HttpListenError extends FreightSyncError {
  constructor(listen: string, cause: unknown) {
    super('HTTP_LISTEN', `cannot listen on ${listen}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

interface Entry {
  server: Server;
  routes: Map<string, RouteHandler>;
  listening: Promise<AddressInfo> | undefined;
  /** Set once bound (port 0 resolved to the real port). */
  bound: AddressInfo | undefined;
}

export function parseListen(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(listen.slice(at + 1)) };
}

/**
 * One node:http server per distinct listen address: the webhook receiver and the ops endpoints
 * share a port when `webhooks.listen` equals `http.listen`, and get their own otherwise. Routes
 * are exact paths; anything else is 404. A handler that throws answers 500 without details.
 */
export class HttpServers {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly logger: Logger) {}

  mount(listen: string, path: string, handler: RouteHandler): void {
    const entry = this.entry(listen);
    if (entry.routes.has(path)) throw new FreightSyncError('HTTP_ROUTE_TAKEN', `path ${path} is mounted twice on ${listen}`);
    entry.routes.set(path, handler);
  }

  /** Starts listening (once per address) and resolves with the bound address (port 0 → real port). */
  listen(listen: string): Promise<AddressInfo> {
    const entry = this.entry(listen);
    entry.listening ??= new Promise<AddressInfo>((resolve, reject) => {
      const { host, port } = parseListen(listen);
      const onError = (error: Error) => reject(new HttpListenError(listen, error));
      entry.server.once('error', onError);
      entry.server.listen(port, host, () => {
        entry.server.off('error', onError);
        entry.bound = entry.server.address() as AddressInfo;
        resolve(entry.bound);
      });
    });
    return entry.listening;
  }

  /** Every bound server with its routes (for the line `run` prints when it is ready). */
  listening(): Array<{ url: string; paths: string[] }> {
    return [...this.entries.values()]
      .filter((entry) => entry.bound !== undefined)
      .map((entry) => {
        const { address, family, port } = entry.bound!;
        return { url: `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`, paths: [...entry.routes.keys()] };
      });
  }

  /** Removes a route; closes the server once it has none left. */
  async unmount(listen: string, path: string): Promise<void> {
    const entry = this.entries.get(listen);
    if (!entry) return;
    entry.routes.delete(path);
    if (entry.routes.size > 0) return;
    this.entries.delete(listen);
    if (!entry.listening) return;
    await new Promise<void>((resolve) => {
      entry.server.close(() => resolve());
      // Idle keep-alive sockets would hold close() open until they time out.
      entry.server.closeIdleConnections();
      setTimeout(() => entry.server.closeAllConnections(), 2_000).unref();
    });
  }

  private entry(listen: string): Entry {
    let entry = this.entries.get(listen);
    if (entry) return entry;
    const routes = new Map<string, RouteHandler>();
    const server = createServer((req, res) => void this.dispatch(routes, req, res));
    server.keepAliveTimeout = 5_000;
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    entry = { server, routes, listening: undefined, bound: undefined };
    this.entries.set(listen, entry);
    return entry;
  }

  private async dispatch(routes: Map<string, RouteHandler>, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const handler = routes.get(path) ?? routes.get(path.replace(/\/+$/, '') || '/');
    try {
      if (!handler) {
        sendJson(res, 404, { error: 'not found' });
        req.resume();
        return;
      }
      await handler(req, res);
    } catch (error) {
      this.logger.error({ err: error, path }, 'http handler failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    }
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store', ...headers });
  res.end(text);
}
