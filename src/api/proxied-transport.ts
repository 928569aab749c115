import type http from 'node:http';
import type https from 'node:https';
import axios, { type AxiosInstance, isAxiosError } from 'axios';
import type { ExchangeError, ExchangeResult } from './http-exchange.js';
import { gatedTransport, refusedByGate } from './write-gate.js';

export interface ProxiedRequest {
  method: string;
  /** Below the base URL, with its query. */
  url: string;
  headers: Record<string, string>;
  body: string | Buffer | FormData | undefined;
  signal: AbortSignal | undefined;
  beforeWrite: (() => void) | undefined;
  timeoutMs: number;
}

/**
 * Requests through the proxy the environment names (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
 * `NO_PROXY`): axios does the forwarding and the CONNECT tunnel. Loaded only when such a variable
 * is set; every other setup goes straight through node:http (http-exchange.ts). Same settings as
 * that path: every status returned, no redirects, bodies decompressed, both timeouts.
 */
export class ProxiedTransport {
  private readonly axios: AxiosInstance;

  constructor(
    baseUrl: string,
    timeoutMs: number,
    agents: { http: http.Agent; https: https.Agent },
  ) {
    this.axios = axios.create({
      baseURL: baseUrl,
      timeout: timeoutMs,
      responseType: 'arraybuffer',
      transformResponse: [(data: unknown) => data],
      validateStatus: () => true,
      maxRedirects: 0,
      decompress: true,
      httpAgent: agents.http,
      httpsAgent: agents.https,
    });
  }

  async send(request: ProxiedRequest): Promise<ExchangeResult> {
    try {
      const response = await this.axios.request<unknown>({
        method: request.method,
        url: request.url,
        data: request.body,
        headers: request.headers,
        signal: request.signal,
        timeout: request.timeoutMs,
        ...(request.beforeWrite ? { transport: gatedTransport(request.beforeWrite, request.timeoutMs) } : {}),
      });
      const headers: http.IncomingHttpHeaders = {};
      for (const [name, value] of Object.entries(response.headers ?? {})) {
        if (value != null) headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
      }
      return { status: response.status, headers, bytes: asBuffer(response.data) };
    } catch (error) {
      if (!isAxiosError(error)) throw error;
      // Stopped unsent by its gate: handed back as it is (not a network failure).
      if (refusedByGate(error.cause)) throw error.cause;
      throw Object.assign(new Error(error.message), { code: error.code }) as ExchangeError;
    }
  }
}

/** axios gives a Buffer for `arraybuffer` in Node; anything else (a mocked adapter) as its text. */
function asBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(typeof data === 'string' ? data : String(data ?? ''), 'utf8');
}
