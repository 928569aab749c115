import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy in front of the simulator that can hold the token calls (`POST
 * /retrieve-token`, `GET /token`, `GET /generate-new-token`) instead of forwarding them: a test
 * then knows a process is inside a token refresh, and can kill it there. Everything else (and
 * every token call while not holding) passes through unchanged.
 */
export interface AuthGateProxy {
  readonly baseUrl: string;
  /** While true, token calls are held (not forwarded) until `hold(false)`. */
  hold(on: boolean): void;
  /** Token calls held right now (their client still connected). */
  held(): number;
  /** Token calls forwarded so far. */
  forwarded(): number;
  close(): Promise<void>;
}

const TOKEN_ROUTES = ['/retrieve-token', '/token', '/generate-new-token'];

export async function startAuthGateProxy(upstreamBaseUrl: string): Promise<AuthGateProxy> {
  const upstream = new URL(upstreamBaseUrl);
  const prefix = upstream.pathname.replace(/\/+$/, '');
  let holding = false;
  let forwardedCount = 0;
  const waiting = new Set<() => void>();

  const forward = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => {
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    out.end(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const pathname = new URL(req.url ?? '/', 'http://x').pathname;
      const route = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : pathname;
      if (!TOKEN_ROUTES.includes(route)) return forward(req, body, res);
      const release = () => {
        waiting.delete(release);
        if (res.destroyed || req.socket.destroyed) return;
        forwardedCount += 1;
        forward(req, body, res);
      };
      if (!holding) return release();
      waiting.add(release);
      // A client that died while held (SIGKILL) is gone; forgetting it keeps held() honest.
      res.on('close', () => waiting.delete(release));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    hold(on) {
      holding = on;
      if (!on) for (const release of [...waiting]) release();
    },
    held: () => waiting.size,
    forwarded: () => forwardedCount,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
