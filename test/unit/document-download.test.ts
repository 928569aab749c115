import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/api-client.js';
import { DocumentDownloadError, DocumentTooLargeError, openDocument, sendsApiToken } from '../../src/api/document-download.js';

/** A loopback server recording the headers of each request; routes answer as the tests need. */
async function recordingServer(route: (path: string, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; origin: string; seen: Array<{ path: string; headers: IncomingHttpHeaders }> }> {
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    route(req.url ?? '', res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const TOKEN = 'access-token-for-the-api-only';
const OPTIONS = { maxBytes: 1_000, timeoutMs: 5_000 };
const signal = new AbortController().signal;

describe('document downloads', () => {
  let api: Awaited<ReturnType<typeof recordingServer>>;
  let storage: Awaited<ReturnType<typeof recordingServer>>;
  let client: ApiClient;

  beforeAll(async () => {
    storage = await recordingServer((path, res) => {
      if (path.startsWith('/file')) return void res.writeHead(200, { 'Content-Type': 'application/pdf' }).end('storage bytes');
      if (path === '/big') return void res.writeHead(200, { 'Content-Length': '5000' }).end(Buffer.alloc(5000));
      if (path === '/big-chunked') {
        res.writeHead(200);
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(300));
        return void res.end();
      }
      if (path.startsWith('/busy')) return void res.writeHead(503).end();
      res.writeHead(404).end();
    });
    api = await recordingServer((path, res) => {
      if (path === '/v1/files/own') return void res.writeHead(200).end('api bytes');
      if (path === '/v1/files/moved') return void res.writeHead(302, { Location: `${storage.origin}/file-moved` }).end();
      res.writeHead(404).end();
    });
    client = { baseUrl: `${api.origin}/v1`, tokens: { accessToken: async () => TOKEN, onUnauthorized: async () => TOKEN } } as unknown as ApiClient;
  });

  afterAll(async () => {
    for (const s of [api?.server, storage?.server]) await new Promise((resolve) => s?.close(resolve));
  });

  it('states the rule: the token goes to the API origin only', () => {
    expect(sendsApiToken('https://api.example.com/v1', 'https://api.example.com/files/1.pdf')).toBe(true);
    expect(sendsApiToken('https://api.example.com/v1', 'https://api.example.com:8443/files/1.pdf')).toBe(false);
    expect(sendsApiToken('https://api.example.com/v1', 'http://api.example.com/files/1.pdf')).toBe(false);
    expect(sendsApiToken('https://api.example.com/v1', 'https://bucket.s3.amazonaws.com/api.example.com/1.pdf')).toBe(false);
  });

  it('sends the bearer token to the API origin', async () => {
    const opened = await openDocument(client, `${api.origin}/v1/files/own`, OPTIONS, signal);
    expect((await readAll(opened.body)).toString()).toBe('api bytes');
    expect(api.seen.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('never sends it to another origin, also not after a redirect from the API', async () => {
    const direct = await openDocument(client, `${storage.origin}/file-direct`, OPTIONS, signal);
    expect((await readAll(direct.body)).toString()).toBe('storage bytes');
    const moved = await openDocument(client, `${api.origin}/v1/files/moved`, OPTIONS, signal);
    expect((await readAll(moved.body)).toString()).toBe('storage bytes');
    expect(storage.seen.map((s) => [s.path, s.headers.authorization])).toEqual([
      ['/file-direct', undefined],
      ['/file-moved', undefined],
    ]);
  });

  it('refuses a file over maxBytes, announced or found while reading', async () => {
    await expect(openDocument(client, `${storage.origin}/big`, OPTIONS, signal)).rejects.toThrow(DocumentTooLargeError);
    const chunked = await openDocument(client, `${storage.origin}/big-chunked`, OPTIONS, signal);
    await expect(readAll(chunked.body)).rejects.toThrow(/over the limit of 1000 bytes/);
  });

  it('tells retryable failures from permanent ones, and keeps the query out of messages', async () => {
    const busy = await openDocument(client, `${storage.origin}/busy?X-Amz-Signature=secret-signature`, OPTIONS, signal).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(DocumentDownloadError);
    expect(busy).toMatchObject({ retryable: true, status: 503 });
    expect((busy as Error).message).toBe(`GET ${storage.origin}/busy: HTTP 503`);
    const missing = await openDocument(client, `${storage.origin}/nothing`, OPTIONS, signal).catch((e: unknown) => e);
    expect(missing).toMatchObject({ retryable: false, status: 404 });
    await expect(openDocument(client, 'file:///etc/passwd', OPTIONS, signal)).rejects.toThrow(/only http and https/);
  });
});
