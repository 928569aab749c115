import http from 'node:http';

/**
 * A tiny round-robin HTTP forwarder in front of the replicas' webhook receivers: the simulator's
 * sender targets one URL, so each delivery goes to the next replica in turn — standbys included.
 * A replica that is dead (connection refused) or stopped (no answer within `timeoutMs`) gets a
 * 502/504 back to the sender, which retries (and the retry lands on the next replica).
 */
export interface WebhookForwarder {
  readonly url: string;
  /** Deliveries answered per target port, and failures (refused or timed out). */
  readonly counts: Map<number, { ok: number; failed: number }>;
  close(): Promise<void>;
}

export async function startWebhookForwarder(targets: () => readonly number[], path: string, timeoutMs = 4_000): Promise<WebhookForwarder> {
  const counts = new Map<number, { ok: number; failed: number }>();
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const ports = targets();
      const port = ports[next++ % Math.max(1, ports.length)];
      const count = counts.get(port ?? 0) ?? { ok: 0, failed: 0 };
      counts.set(port ?? 0, count);
      if (port === undefined) {
        res.writeHead(503).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'x-hub-signature']) {
        const v = req.headers[name];
        if (typeof v === 'string') headers[name] = v;
      }
      fetch(`http://127.0.0.1:${port}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, body: Buffer.concat(chunks), signal: AbortSignal.timeout(timeoutMs) }).then(
        async (answer) => {
          const body = Buffer.from(await answer.arrayBuffer());
          count.ok += 1;
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(body);
        },
        (error: unknown) => {
          count.failed += 1;
          res.writeHead((error as Error).name === 'TimeoutError' ? 504 : 502).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}${path}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
