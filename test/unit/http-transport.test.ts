import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiNetworkError } from '../../src/api/errors.js';
import { HttpTransport } from '../../src/api/http-transport.js';
import { releaseBuffer } from '../../src/util/large-buffers.js';

/** A loopback server whose answers the test writes itself; records each request's line, headers and body. */
async function startServer(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void) {
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, seen };
}

function transport(port: number, timeoutMs = 10_000) {
  const t = new HttpTransport({ baseUrl: `http://127.0.0.1:${port}/v1/`, timeoutMs });
  closers.push(() => t.close());
  return t;
}

const endpoint = { method: 'GET', route: '/loads' } as const;
const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('HttpTransport over node:http', () => {
  const json = '{"data":[{"reference_number":"M1","note":"é"}]}';
  const encodings: Array<[string, (body: Buffer) => Buffer]> = [
    ['gzip', (b) => zlib.gzipSync(b)],
    ['x-gzip', (b) => zlib.gzipSync(b)],
    ['deflate', (b) => zlib.deflateSync(b)],
    ['br', (b) => zlib.brotliCompressSync(b)],
  ];

  it.each(encodings)('decompresses a %s body and drops the Content-Encoding header it no longer has', async (encoding, compress) => {
    const api = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding }).end(compress(Buffer.from(json))));
    const answer = await transport(api.port).send({ method: 'GET', path: '/loads', endpoint });
    expect(answer.body).toBe(json);
    expect(answer.bytes.equals(Buffer.from(json))).toBe(true);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(api.seen[0]!.headers['accept-encoding']).toBe('gzip, compress, deflate, br');
  });

  it('large bodies, plain and compressed, arrive whole one after another while their memory is released and taken again', async () => {
    // Pseudo-random text compresses poorly: both the compressed and the plain body span many socket chunks.
    const bodyOf = (seed: number) => {
      let x = seed;
      const parts: string[] = [];
      for (let i = 0; i < 30_000; i++) {
        x = (x * 1_103_515_245 + 12_345) >>> 0;
        parts.push(x.toString(36));
      }
      return Buffer.from(JSON.stringify({ data: parts }));
    };
    const api = await startServer((req, res) => {
      const [, kind, seed] = (req.url ?? '').split('/').slice(1);
      const body = bodyOf(Number(seed));
      if (kind === 'gzip') res.writeHead(200, { 'content-encoding': 'gzip' }).end(zlib.gzipSync(body));
      else res.writeHead(200).end(body);
    });
    const client = transport(api.port);
    for (let seed = 1; seed <= 6; seed++) {
      const kind = seed % 2 === 0 ? 'gzip' : 'plain';
      const answer = await client.send({ method: 'GET', path: `/${kind}/${seed}`, endpoint });
      const expected = bodyOf(seed);
      expect(expected.length).toBeGreaterThan(128 * 1024);
      expect(answer.bytes.equals(expected)).toBe(true);
      // What the API client does once a page is parsed: the next answer may take this memory.
      releaseBuffer(answer.bytes);
    }
  });

  it('decompresses a deflate body sent without its zlib header, and keeps an encoding it does not know as it came', async () => {
    const api = await startServer((req, res) => {
      if (req.url === '/v1/raw') res.writeHead(200, { 'content-encoding': 'deflate' }).end(zlib.deflateRawSync(Buffer.from(json)));
      else res.writeHead(200, { 'content-encoding': 'identity' }).end(json);
    });
    const t = transport(api.port);
    expect((await t.send({ method: 'GET', path: '/raw', endpoint })).body).toBe(json);
    const identity = await t.send({ method: 'GET', path: '/other', endpoint });
    expect(identity.body).toBe(json);
    expect(identity.headers['content-encoding']).toBe('identity');
  });

  it('a gzip body cut short gives what arrived (the caller sees a truncated body), an empty one nothing, a corrupt one a network failure', async () => {
    const full = zlib.gzipSync(Buffer.from(`{"data":[${'{"a":"xxxxxxxxxxxxxxxx"},'.repeat(2000)}{}]}`));
    const bodies: Record<string, Buffer> = { '/v1/cut': full.subarray(0, full.length >> 1), '/v1/empty': Buffer.alloc(0), '/v1/corrupt': Buffer.from('not gzip at all') };
    const api = await startServer((req, res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(bodies[req.url ?? '']));
    const t = transport(api.port);
    const cut = await t.send({ method: 'GET', path: '/cut', endpoint });
    expect(cut.body.startsWith('{"data":[{"a":"xxxxxxxxxxxxxxxx"},')).toBe(true);
    expect(cut.body.endsWith('{}]}')).toBe(false);
    expect((await t.send({ method: 'GET', path: '/empty', endpoint })).bytes.length).toBe(0);
    const corrupt = await failure(t.send({ method: 'GET', path: '/corrupt', endpoint }));
    expect(corrupt).toBeInstanceOf(ApiNetworkError);
    expect((corrupt as ApiNetworkError).networkCode).toBe('Z_DATA_ERROR');
  });

  it('returns a redirect as it is, without following it', async () => {
    const api = await startServer((_req, res) => res.writeHead(302, { location: '/v1/elsewhere' }).end());
    const answer = await transport(api.port).send({ method: 'GET', path: '/loads', endpoint });
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('/v1/elsewhere');
    expect(api.seen.map((r) => r.url)).toEqual(['/v1/loads']);
  });

  it('sends the query, the bearer and a JSON body with its length; repeated headers come back joined', async () => {
    const api = await startServer((_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
    const answer = await transport(api.port).send({ method: 'POST', path: '/loads', endpoint, query: { skip: 0, q: 'a b' }, body: { caller: 'é' }, bearer: 'tok-1' });
    expect(answer.status).toBe(201);
    expect(answer.headers['set-cookie']).toBe('a=1, b=2');
    const sent = api.seen[0]!;
    expect(sent.url).toBe('/v1/loads?skip=0&q=a+b');
    expect(sent.headers.authorization).toBe('Bearer tok-1');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['content-length']).toBe(String(Buffer.byteLength('{"caller":"é"}')));
    expect(sent.body.toString('utf8')).toBe('{"caller":"é"}');
  });

  it('sends a FormData upload as multipart with its boundary and length', async () => {
    const api = await startServer((_req, res) => res.writeHead(200).end('{}'));
    const form = new FormData();
    form.append('reference_number', 'M1');
    form.append('file', new Blob([Buffer.from('%PDF-1.4')], { type: 'application/pdf' }), 'doc.pdf');
    await transport(api.port).send({ method: 'POST', path: '/loads/document', endpoint, body: form });
    const sent = api.seen[0]!;
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(sent.headers['content-type'] ?? '')?.[1];
    expect(boundary).toBeDefined();
    expect(sent.headers['content-length']).toBe(String(sent.body.length));
    const text = sent.body.toString('utf8');
    expect(text).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="reference_number"\r\n\r\nM1\r\n`);
    expect(text).toContain('Content-Disposition: form-data; name="file"; filename="doc.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n');
    expect(text.trimEnd().endsWith(`--${boundary}--`)).toBe(true);
  });

  it('a server that never answers: the call fails as timed out, without the bearer in its message', async () => {
    const api = await startServer(() => undefined);
    const error = await failure(transport(api.port, 50).send({ method: 'GET', path: '/loads', endpoint, bearer: 'secret-bearer' }));
    expect(error).toBeInstanceOf(ApiNetworkError);
    expect((error as ApiNetworkError).message).toContain('request timed out');
    expect((error as ApiNetworkError).message).not.toContain('secret-bearer');
    expect((error as ApiNetworkError).mayHaveBeenProcessed).toBe(true);
  });

  it('a body that stops coming after the headers: timed out by the idle socket', async () => {
    const api = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"data":[');
    });
    const error = await failure(transport(api.port, 50).send({ method: 'GET', path: '/loads', endpoint }));
    expect(error).toBeInstanceOf(ApiNetworkError);
    expect((error as ApiNetworkError).networkCode).toBe('ECONNABORTED');
  });

  it('a connection closed in the middle of the body is a network failure that may have been processed', async () => {
    const api = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"data":[', () => req.socket.destroy());
    });
    const error = await failure(transport(api.port).send({ method: 'POST', path: '/loads', endpoint, body: {} }));
    expect(error).toBeInstanceOf(ApiNetworkError);
    expect((error as ApiNetworkError).mayHaveBeenProcessed).toBe(true);
  });

  it('a refused connection is a network failure that was surely not processed', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(transport(port).send({ method: 'POST', path: '/loads', endpoint, body: {} }));
    expect(error).toBeInstanceOf(ApiNetworkError);
    expect((error as ApiNetworkError).networkCode).toBe('ECONNREFUSED');
    expect((error as ApiNetworkError).mayHaveBeenProcessed).toBe(false);
  });

  it('aborted in the middle of the body: fails with the signal\'s reason, and the next request still goes', async () => {
    const controller = new AbortController();
    const api = await startServer((req, res) => {
      if (req.url === '/v1/slow') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"data":[', () => controller.abort(new Error('shutdown requested')));
      } else res.writeHead(200).end('{}');
    });
    const t = transport(api.port);
    const error = await failure(t.send({ method: 'GET', path: '/slow', endpoint, signal: controller.signal }));
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('shutdown requested');
    expect(error).not.toBeInstanceOf(ApiNetworkError);
    // The pool is not left with the aborted exchange's socket.
    expect((await t.send({ method: 'GET', path: '/after', endpoint })).status).toBe(200);
    expect(api.seen.map((r) => r.url)).toEqual(['/v1/slow', '/v1/after']);
  });

  it('an already aborted signal sends nothing', async () => {
    const api = await startServer((_req, res) => res.writeHead(200).end('{}'));
    const controller = new AbortController();
    controller.abort(new Error('stopped before'));
    const error = await failure(transport(api.port).send({ method: 'DELETE', path: '/loads/M1', endpoint, signal: controller.signal }));
    expect((error as Error).message).toBe('stopped before');
    expect(api.seen).toEqual([]);
  });
});

describe('HttpTransport with a proxy named in the environment', () => {
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('sends each request through the proxy, as axios did', async () => {
    const proxy = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"via":"proxy"}'));
    process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
    delete process.env.http_proxy;
    const t = new HttpTransport({ baseUrl: 'http://api.freight.invalid/v1', timeoutMs: 10_000 });
    closers.push(() => t.close());
    const answer = await t.send({ method: 'GET', path: '/loads', endpoint, query: { limit: 50 }, bearer: 'tok' });
    expect(answer.body).toBe('{"via":"proxy"}');
    expect(proxy.seen[0]!.url).toBe('http://api.freight.invalid/v1/loads?limit=50');
    expect(proxy.seen[0]!.headers.authorization).toBe('Bearer tok');
  });
});
