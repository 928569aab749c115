import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { releaseBuffer, takeBuffer } from '../util/large-buffers.js';
import { decoderFor } from './response-decoding.js';
import { gatedTransport } from './write-gate.js';

export interface Exchange {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: string;
  /** Path and query, encoded. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** `user:password` for Basic auth (credentials in the base URL). */
  auth: string | undefined;
  agent: http.Agent;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  beforeWrite: (() => void) | undefined;
}

export interface ExchangeResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Decompressed. */
  bytes: Buffer;
}

/** A failure of the exchange itself; `code` is Node's (ECONNREFUSED…) or one of the codes below. */
export type ExchangeError = Error & { code?: string };

/** The wall clock ran out before the answer's headers came, or the socket was idle that long. */
export const TIMED_OUT = 'ECONNABORTED';
/** The connection closed in the middle of the answer's body. */
export const BODY_CUT = 'ERR_BAD_RESPONSE';

const keptAlive = new WeakSet<Socket>();

/**
 * One request over node:http(s), its body read whole. Every status is an answer; redirects are
 * not followed. Two clocks, each `timeoutMs`: the wall clock until the answer's headers arrive
 * (a socket's idle timer does not run while TCP connect is pending), and the socket's idle time
 * for the whole exchange, body included. With `beforeWrite`, the request goes through the write
 * gate (write-gate.ts), which keeps its own wall clock for the connect.
 */
export function exchange(request: Exchange): Promise<ExchangeResult> {
  return new Promise((resolve, reject) => {
    const { signal } = request;
    // Already stopped: no request is made (no connection opened for it).
    if (signal?.aborted) {
      reject(codedError('canceled', 'ERR_CANCELED'));
      return;
    }
    let settled = false;
    let wallClock: NodeJS.Timeout | undefined;
    const done = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(wallClock);
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (error: ExchangeError): void => {
      if (!done()) return;
      reject(error);
      req.destroy(error);
    };
    const onAbort = () => fail(codedError('canceled', 'ERR_CANCELED'));
    const timedOut = () => fail(codedError(`timeout of ${request.timeoutMs}ms exceeded`, TIMED_OUT));

    const options: https.RequestOptions = {
      protocol: request.protocol,
      hostname: request.hostname,
      port: request.port || undefined,
      path: request.path,
      method: request.method,
      headers: request.headers,
      agent: request.agent,
      ...(request.auth === undefined ? {} : { auth: request.auth }),
    };
    const onResponse = (res: http.IncomingMessage) => {
      clearTimeout(wallClock);
      if (req.destroyed) return;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('aborted', () => fail(codedError('stream has been aborted', BODY_CUT)));
      res.on('error', fail);
      res.on('end', () => {
        if (settled) return;
        const received = chunks.length === 1 ? chunks[0]! : joinChunks(chunks);
        const headers = res.headers;
        const status = res.statusCode ?? 0;
        const noBody = status === 204 || request.method === 'HEAD';
        const decode = noBody ? undefined : decoderFor(headers['content-encoding']);
        // Decoded (or no body to decode), the body is not in that encoding: the header would mislead.
        if (decode !== undefined || noBody) delete headers['content-encoding'];
        if (decode === undefined) {
          if (done()) resolve({ status, headers, bytes: received });
          return;
        }
        // The answer is complete and its socket back in the pool: a bad encoding fails the call only.
        decode(received).then(
          (bytes) => {
            // Decoded into bytes of their own: the compressed ones are read no more.
            if (bytes !== received) releaseBuffer(received);
            if (done()) resolve({ status, headers, bytes });
          },
          (error: ExchangeError) => done() && reject(error),
        );
      });
    };

    const req = request.beforeWrite
      ? gatedTransport(request.beforeWrite, request.timeoutMs).request(options, onResponse)
      : (request.protocol === 'https:' ? https : http).request(options, onResponse);
    if (!request.beforeWrite) wallClock = setTimeout(timedOut, request.timeoutMs);
    req.setTimeout(request.timeoutMs, timedOut);
    req.on('error', fail);
    req.on('socket', (socket: Socket) => {
      // TCP keep-alive probes once a minute on an idle pooled connection, set once per socket.
      if (keptAlive.has(socket)) return;
      keptAlive.add(socket);
      socket.setKeepAlive(true, 60_000);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    req.end(request.body);
  });
}

/** Buffer.concat of a body's chunks, into a buffer whose memory is reused once it is released (large-buffers.ts). */
function joinChunks(chunks: readonly Buffer[]): Buffer {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const joined = takeBuffer(length);
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(joined, at);
  return joined;
}

function codedError(message: string, code: string): ExchangeError {
  return Object.assign(new Error(message), { code });
}
