import http from 'node:http';
import https from 'node:https';
import axios, { type AxiosInstance, isAxiosError } from 'axios';
import { ApiNetworkError, type EndpointRef } from './errors.js';
import { decodeBody } from './json-body.js';
import { encodeQuery, type QueryParams } from './query-string.js';
import { encodeRequestBody, type RequestEncoding } from './request-body.js';
import { gatedTransport, refusedByGate } from './write-gate.js';

export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Concrete path below the base URL, e.g. `/loads/M000123` (already encoded). */
  path: string;
  endpoint: EndpointRef;
  query?: QueryParams;
  /** A plain object (sent in the transport's `requestEncoding`), or FormData for document uploads. */
  body?: unknown;
  bearer?: string;
  signal?: AbortSignal;
  /**
   * Runs right before the request's bytes are written to a connected socket; throwing stops it
   * unsent, and `send` rejects with what it threw (write-gate.ts).
   */
  beforeWrite?: () => void;
  /** This request's own timeout (default: the transport's). */
  timeoutMs?: number;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string | undefined>;
  /** The body as received (decompressed). */
  bytes: Buffer;
  /** The body as UTF-8 text, decoded when first asked for (a large list page is parsed from `bytes`). */
  readonly body: string;
  receivedAtMs: number;
}

export interface TransportOptions {
  baseUrl: string;
  timeoutMs: number;
  userAgent?: string;
  maxSockets?: number;
  /** How plain-object bodies are encoded (config `api.requestEncoding`); default json. */
  requestEncoding?: RequestEncoding;
}

/**
 * The only place that does HTTP. Bodies are read as text and parsed by the caller, so an HTML
 * error page or a truncated JSON body is seen for what it is instead of being silently passed
 * through as a string. Every status is returned; mapping statuses to errors is the client's job.
 * Network failures become `ApiNetworkError`, never carrying headers or the bearer token.
 */
export class HttpTransport {
  private readonly axios: AxiosInstance;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly requestEncoding: RequestEncoding;
  private readonly timeoutMs: number;

  constructor(options: TransportOptions) {
    this.requestEncoding = options.requestEncoding ?? 'json';
    this.timeoutMs = options.timeoutMs;
    const maxSockets = options.maxSockets ?? 16;
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets });
    this.axios = axios.create({
      baseURL: options.baseUrl.replace(/\/+$/, ''),
      timeout: options.timeoutMs,
      // Bytes: a large page is parsed piecewise from them (json-body.ts), text is decoded on demand.
      responseType: 'arraybuffer',
      transformResponse: [(data: unknown) => data],
      validateStatus: () => true,
      maxRedirects: 0,
      decompress: true,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      headers: {
        Accept: 'application/json',
        'User-Agent': options.userAgent ?? 'freight-sync',
      },
    });
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const query = encodeQuery(request.query);
    const url = query ? `${request.path}?${query}` : request.path;
    const headers: Record<string, string> = {};
    if (request.bearer) headers.Authorization = `Bearer ${request.bearer}`;
    // Every write's body is encoded here, so each endpoint (new ones included) gets the configured encoding.
    const encoded = request.body === undefined ? undefined : encodeRequestBody(request.body, this.requestEncoding);
    if (encoded?.contentType) headers['Content-Type'] = encoded.contentType;
    const timeoutMs = request.timeoutMs ?? this.timeoutMs;
    try {
      const response = await this.axios.request<unknown>({
        method: request.method,
        url,
        data: encoded?.data,
        headers,
        signal: request.signal,
        ...(request.timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
        ...(request.beforeWrite ? { transport: gatedTransport(request.beforeWrite, timeoutMs) } : {}),
      });
      const flatHeaders: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(response.headers ?? {})) {
        flatHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value == null ? undefined : String(value);
      }
      const bytes = asBuffer(response.data);
      let text: string | undefined;
      return {
        status: response.status,
        headers: flatHeaders,
        bytes,
        get body() {
          return (text ??= decodeBody(bytes));
        },
        receivedAtMs: Date.now(),
      };
    } catch (error) {
      throw toNetworkError(error, request.endpoint, request.signal);
    }
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** axios gives a Buffer for `arraybuffer` in Node; anything else (a mocked adapter) as its text. */
function asBuffer(data: unknown): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(typeof data === 'string' ? data : String(data ?? ''), 'utf8');
}

function toNetworkError(error: unknown, endpoint: EndpointRef, signal: AbortSignal | undefined): Error {
  // Stopped unsent by its gate: not a network failure, and surely not an ambiguous one.
  const cause = isAxiosError(error) ? (error.cause as unknown) : error;
  if (refusedByGate(cause)) return cause;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof Error) return reason;
    const abort = new Error('request aborted');
    abort.name = 'AbortError';
    return abort;
  }
  if (isAxiosError(error)) {
    const code = error.code;
    // A refused connection never reached the server: safe to retry even a POST.
    const refused = code === 'ECONNREFUSED';
    const detail = code === 'ECONNABORTED' || code === 'ETIMEDOUT' ? 'request timed out' : `connection failed: ${error.message}`;
    return new ApiNetworkError(endpoint, code, detail, !refused);
  }
  return new ApiNetworkError(endpoint, undefined, error instanceof Error ? error.message : String(error), true);
}
