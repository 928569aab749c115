import http from 'node:http';
import https from 'node:https';
import { ApiNetworkError, type EndpointRef } from './errors.js';
import { exchange, type ExchangeError, type ExchangeResult, TIMED_OUT } from './http-exchange.js';
import { decodeBody } from './json-body.js';
import type { ProxiedTransport } from './proxied-transport.js';
import { encodeQuery, type QueryParams } from './query-string.js';
import { encodeRequestBody, type RequestEncoding } from './request-body.js';
import { ACCEPT_ENCODING } from './response-decoding.js';
import { refusedByGate } from './write-gate.js';

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
 *
 * Requests go straight through node:http(s) (http-exchange.ts): an HTTP library's per-request
 * option merging cost as much CPU as the whole socket work of a list page. Only when the
 * environment names a proxy for the API's scheme do they go through axios (proxied-transport.ts).
 */
export class HttpTransport {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly requestEncoding: RequestEncoding;
  private readonly timeoutMs: number;
  private readonly baseUrl: string;
  private readonly userAgent: string;
  private proxied: Promise<ProxiedTransport> | undefined;

  constructor(options: TransportOptions) {
    this.requestEncoding = options.requestEncoding ?? 'json';
    this.timeoutMs = options.timeoutMs;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.userAgent = headerValue(options.userAgent ?? 'freight-sync');
    const maxSockets = options.maxSockets ?? 16;
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets });
    if (proxyNamedFor(this.baseUrl)) {
      const agents = { http: this.httpAgent, https: this.httpsAgent };
      this.proxied = import('./proxied-transport.js').then((m) => new m.ProxiedTransport(this.baseUrl, this.timeoutMs, agents));
    }
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const query = encodeQuery(request.query);
    const url = query ? `${request.path}?${query}` : request.path;
    // Every write's body is encoded here, so each endpoint (new ones included) gets the configured encoding.
    const encoded = request.body === undefined ? undefined : encodeRequestBody(request.body, this.requestEncoding);
    try {
      const answer = this.proxied
        ? await (await this.proxied).send({
            method: request.method,
            url,
            headers: this.headers(request.bearer, encoded?.contentType, undefined),
            body: encoded?.data,
            signal: request.signal,
            beforeWrite: request.beforeWrite,
            timeoutMs: request.timeoutMs ?? this.timeoutMs,
          })
        : await this.direct(request, url, encoded?.data, encoded?.contentType);
      return toResponse(answer);
    } catch (error) {
      throw toNetworkError(error, request.endpoint, request.signal);
    }
  }

  private async direct(request: TransportRequest, url: string, data: string | Buffer | FormData | undefined, contentType: string | undefined): Promise<ExchangeResult> {
    let body: Buffer | undefined;
    if (typeof data === 'string') body = Buffer.from(data, 'utf8');
    else if (Buffer.isBuffer(data)) body = data;
    else if (data !== undefined) {
      // FormData (document uploads): the platform writes the multipart body and its boundary.
      const form = new Response(data);
      contentType = form.headers.get('content-type') ?? undefined;
      body = Buffer.from(await form.arrayBuffer());
    }
    // As a browser would: the base URL's path joined with the request's, dot segments resolved.
    const target = new URL(`${this.baseUrl}/${url.replace(/^\/+/, '')}`);
    const headers = this.headers(request.bearer, contentType, body?.length);
    let auth: string | undefined;
    if (target.username || target.password) {
      // Credentials in the base URL: Basic auth, which takes the Authorization header's place.
      auth = `${decodeSafely(target.username)}:${decodeSafely(target.password)}`;
      delete headers.Authorization;
    }
    const protocol = target.protocol;
    if (protocol !== 'http:' && protocol !== 'https:') throw Object.assign(new Error(`Unsupported protocol ${protocol}`), { code: 'ERR_BAD_REQUEST' });
    return exchange({
      protocol,
      hostname: target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname,
      port: target.port,
      path: target.pathname + target.search,
      method: request.method,
      headers,
      body,
      auth,
      agent: protocol === 'https:' ? this.httpsAgent : this.httpAgent,
      timeoutMs: request.timeoutMs ?? this.timeoutMs,
      signal: request.signal,
      beforeWrite: request.beforeWrite,
    });
  }

  /** The request's headers, in the order they have always been sent. */
  private headers(bearer: string | undefined, contentType: string | undefined, contentLength: number | undefined): Record<string, string> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (contentType) headers['Content-Type'] = headerValue(contentType);
    headers['User-Agent'] = this.userAgent;
    if (bearer) headers.Authorization = headerValue(`Bearer ${bearer}`);
    if (contentLength !== undefined) headers['Content-Length'] = String(contentLength);
    headers['Accept-Encoding'] = ACCEPT_ENCODING;
    return headers;
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function toResponse(answer: ExchangeResult): TransportResponse {
  const headers: Record<string, string | undefined> = {};
  for (const name in answer.headers) {
    const value = answer.headers[name];
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const bytes = answer.bytes;
  let text: string | undefined;
  return {
    status: answer.status,
    headers,
    bytes,
    get body() {
      return (text ??= decodeBody(bytes));
    },
    receivedAtMs: Date.now(),
  };
}

/**
 * Whether the environment names a proxy for the base URL's scheme (the variables axios reads;
 * it also applies `NO_PROXY`, so a named proxy may still not be used for this host).
 */
function proxyNamedFor(baseUrl: string): boolean {
  const scheme = /^([a-z][a-z\d+.-]*):/i.exec(baseUrl)?.[1]?.toLowerCase();
  const env = (name: string) => process.env[name.toLowerCase()] || process.env[name.toUpperCase()];
  return Boolean(scheme && (env(`${scheme}_proxy`) || env('all_proxy')));
}

// Header values lose control characters and surrounding blanks rather than failing the request.
const UNSAFE_IN_HEADER = /[^\t\x20-\x7e\x80-\xff]|^[\t ]|[\t ]$/;

function headerValue(value: string): string {
  return UNSAFE_IN_HEADER.test(value) ? value.replace(/[^\t\x20-\x7e\x80-\xff]+/g, '').replace(/^[\t ]+|[\t ]+$/g, '') : value;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function toNetworkError(error: unknown, endpoint: EndpointRef, signal: AbortSignal | undefined): Error {
  // Stopped unsent by its gate: not a network failure, and surely not an ambiguous one.
  if (refusedByGate(error)) return error;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof Error) return reason;
    const abort = new Error('request aborted');
    abort.name = 'AbortError';
    return abort;
  }
  if (error instanceof Error) {
    const code = (error as ExchangeError).code;
    // A refused connection never reached the server: safe to retry even a POST.
    const refused = code === 'ECONNREFUSED';
    const detail = code === TIMED_OUT || code === 'ETIMEDOUT' ? 'request timed out' : `connection failed: ${error.message}`;
    return new ApiNetworkError(endpoint, code, detail, !refused);
  }
  return new ApiNetworkError(endpoint, undefined, String(error), true);
}
