import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiNetworkError } from '../../src/api/errors.js';
import { HttpTransport } from '../../src/api/http-transport.js';
import { gatedTransport } from '../../src/api/write-gate.js';

/** A loopback server that records what reached it; `/slow` answers only when released. */
async function startServer(make: typeof http.createServer | ((handler: http.RequestListener) => https.Server) = http.createServer) {
  const seen: string[] = [];
  const connections: number[] = [];
  const slow: Array<() => void> = [];
  const server = make((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      if (req.url === '/slow') slow.push(answer);
      else answer();
    });
  });
  server.on('connection', () => connections.push(Date.now()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, seen, connections, releaseSlow: () => slow.splice(0).forEach((answer) => answer()) };
}

/** One request through the gated transport; resolves with the status. */
function gatedRequest(options: https.RequestOptions, check: () => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = gatedTransport(check, 10_000).request(options, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

class Refused extends Error {
  override name = 'AbortError';
}

describe('HttpTransport with beforeWrite', () => {
  it('a write that waited for a socket is checked again when it gets one: refused there, it never reaches the server', async () => {
    const api = await startServer();
    const transport = new HttpTransport({ baseUrl: `http://127.0.0.1:${api.port}`, timeoutMs: 10_000, maxSockets: 1 });
    closers.push(() => transport.close(), () => api.server.close());
    // The only socket is busy with a slow read; the create queues behind it in the agent.
    const read = transport.send({ method: 'GET', path: '/slow', endpoint: { method: 'GET', route: '/slow' } });
    while (api.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    let held = true;
    let checks = 0;
    const create = transport.send({
      method: 'POST',
      path: '/loads',
      endpoint: { method: 'POST', route: '/loads' },
      body: { caller: 'c1' },
      beforeWrite: () => {
        checks += 1;
        if (!held) throw new Refused('lease of account a1 expired on this replica');
      },
    });
    // The lease passes while the create waits (a pause, a slow read ahead of it).
    held = false;
    api.releaseSlow();
    expect((await read).status).toBe(200);
    const error = await create.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Refused);
    expect(error).not.toBeInstanceOf(ApiNetworkError);
    expect(checks).toBe(1);
    // Give a wrongly sent request every chance to arrive before looking.
    const probe = await transport.send({ method: 'GET', path: '/probe', endpoint: { method: 'GET', route: '/probe' } });
    expect(probe.status).toBe(200);
    expect(api.seen).toEqual(['GET /slow', 'GET /probe']);
  });

  it('on a new connection the check runs once it is connected; on a kept-alive one right before the write', async () => {
    const api = await startServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    closers.push(() => agent.destroy(), () => api.server.close());
    const connectingAtCheck: boolean[] = [];
    const check = () => connectingAtCheck.push(Object.values(agent.sockets).flat()[0]?.connecting ?? true);
    expect(await gatedRequest({ protocol: 'http:', host: '127.0.0.1', port: api.port, method: 'POST', path: '/loads', agent }, check)).toBe(200);
    expect(await gatedRequest({ protocol: 'http:', host: '127.0.0.1', port: api.port, method: 'POST', path: '/loads', agent }, check)).toBe(200);
    expect(api.seen).toEqual(['POST /loads', 'POST /loads']);
    expect(api.connections).toHaveLength(1);
    // Checked once per request, each time on a connected socket.
    expect(connectingAtCheck).toEqual([false, false]);
  });

  it('refused on a new connection: the server sees the connection but no request', async () => {
    const api = await startServer();
    const transport = new HttpTransport({ baseUrl: `http://127.0.0.1:${api.port}`, timeoutMs: 10_000 });
    closers.push(() => transport.close(), () => api.server.close());
    const sent = transport.send({
      method: 'DELETE',
      path: '/loads/M1',
      endpoint: { method: 'DELETE', route: '/loads/:ref' },
      beforeWrite: () => {
        throw new Refused('not held');
      },
    });
    await expect(sent).rejects.toBeInstanceOf(Refused);
    const probe = await transport.send({ method: 'GET', path: '/probe', endpoint: { method: 'GET', route: '/probe' } });
    expect(probe.status).toBe(200);
    expect(api.seen).toEqual(['GET /probe']);
  });

  it('requests without beforeWrite are not gated', async () => {
    const api = await startServer();
    const transport = new HttpTransport({ baseUrl: `http://127.0.0.1:${api.port}`, timeoutMs: 10_000 });
    closers.push(() => transport.close(), () => api.server.close());
    expect((await transport.send({ method: 'POST', path: '/loads', endpoint: { method: 'POST', route: '/loads' }, body: {} })).status).toBe(200);
    expect(api.seen).toEqual(['POST /loads']);
  });
});

describe('gatedTransport over TLS', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'write-gate-tls-'));
  let key: Buffer | undefined;
  let cert: Buffer | undefined;
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    key = fs.readFileSync(path.join(dir, 'key.pem'));
    cert = fs.readFileSync(path.join(dir, 'cert.pem'));
  } catch {
    if (process.env.CI === 'true') throw new Error('openssl is needed for the TLS write-gate test (apt-get install -y openssl)');
    console.warn('SKIPPED: TLS write-gate test needs openssl (apt-get install -y openssl)');
  }

  const request = (port: number, agent: https.Agent, check: () => void) => gatedRequest({ protocol: 'https:', host: '127.0.0.1', port, method: 'POST', path: '/loads', agent, ca: cert }, check);

  it.skipIf(!key)('checks after the handshake on a new connection and right before the write on a kept-alive one', async () => {
    const api = await startServer((handler: http.RequestListener) => https.createServer({ key, cert }, handler));
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: cert });
    closers.push(() => agent.destroy(), () => api.server.close());
    const handshakeDoneAtCheck: boolean[] = [];
    const check = () => {
      const socket = Object.values(agent.sockets).flat()[0] as TLSSocket | undefined;
      handshakeDoneAtCheck.push(socket !== undefined && !socket.connecting && socket.getFinished() !== undefined);
    };
    expect(await request(api.port, agent, check)).toBe(200);
    expect(await request(api.port, agent, check)).toBe(200);
    expect(api.connections).toHaveLength(1);
    expect(handshakeDoneAtCheck).toEqual([true, true]);
    await expect(
      request(api.port, agent, () => {
        throw new Refused('not held');
      }),
    ).rejects.toBeInstanceOf(Refused);
    expect(api.seen).toEqual(['POST /loads', 'POST /loads']);
  });
});
