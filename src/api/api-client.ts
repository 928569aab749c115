import { setImmediate as turnOfEventLoop } from 'node:timers/promises';
import type { z } from 'zod';
import { isAbortError, sleep, throwIfAborted } from '../util/abort.js';
import type { Logger } from '../util/logger.js';
import { registerSecret } from '../util/secrets.js';
import { inApiOrder } from './api-order.js';
import type { ApiClientEvents, ApiClientStats } from './client-events.js';
import {
  ApiAuthError,
  ApiEncodingError,
  ApiError,
  ApiNetworkError,
  ApiResponseError,
  ApiRetriesExhaustedError,
  ApiUnsupportedError,
  type EndpointRef,
} from './errors.js';
import { HttpTransport, type TransportResponse } from './http-transport.js';
import { parseJsonBody, scanListBody, type ListScan } from './json-body.js';
import { listPeekOf, type ListPeekHandler } from './list-peek.js';
import { releaseBuffer } from '../util/large-buffers.js';
import type { QueryParams } from './query-string.js';
import { defaultRequestEncoding, type RequestEncoding } from './request-body.js';
import { RateBudget, type RateBudgetOptions } from './rate-budget.js';
import { decideRetry, DEFAULT_RETRY, parseRetryAfter, type RetryOptions } from './retry-policy.js';
import { errorEnvelopeSchema, successEnvelopeSchema, type SuccessEnvelope } from './schemas/envelope.js';
import { tokenRecordSchema, type TokenRecord } from './schemas/resources.js';
import { ServerClock } from './server-clock.js';
import { type AuthCredentials, TokenManager } from './token-manager.js';
import type { TokenStore } from './token-store.js';
import type { ApiVariant } from './variant.js';
import { accountKey } from './account-key.js';

export { accountKey } from './account-key.js';

export interface ApiClientOptions {
  baseUrl: string;
  variant: ApiVariant;
  credentials: AuthCredentials;
  tokenStore: TokenStore;
  logger: Logger;
  timeoutMs?: number;
  refreshBeforeExpiryMs?: number;
  /** How long a token refresh may hold the account's lock in a shared store (TokenManagerOptions.refreshLockTtlMs). */
  refreshLockTtlMs?: number;
  /** How long to wait for another process's refresh before one that spends nothing goes ahead (TokenManagerOptions.refreshLockPatienceMs). */
  refreshLockPatienceMs?: number;
  rateLimit?: Omit<RateBudgetOptions, 'now'>;
  /** Share one budget between clients of the same account (e.g. tests that restart a client). */
  budget?: RateBudget;
  retry?: Partial<RetryOptions>;
  userAgent?: string;
  events?: ApiClientEvents;
  /** Encoding of every request body that is not a file upload (config `api.requestEncoding`); default per variant (§5.2). */
  requestEncoding?: RequestEncoding;
}

export interface ApiCall<T> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Route template for messages and metrics, e.g. `/loads/:reference_number`. */
  route: string;
  /** Concrete path; defaults to `route`. Path parameters must already be encoded. */
  path?: string;
  query?: QueryParams;
  body?: unknown;
  /** Validates `data` of the success envelope. */
  schema: z.ZodType<T>;
  /** Token calls go without an access token. */
  anonymous?: boolean;
  /** Override the bearer (token endpoints send the refresh token). */
  bearer?: string;
  /** Default: true for GET/PUT/DELETE, false for POST. A non-idempotent call is never retried blindly. */
  idempotent?: boolean;
  /**
   * A 2xx whose body cannot be read is final, not retried: the call took effect, and asking again
   * would spend what it replaced (a brokerage rotation: the old refresh token is dead, and a retry
   * presents it — to a server that may take that for a stolen token).
   */
  unreadableSuccessIsFinal?: boolean;
  /**
   * Checked before the request goes out and again right before its bytes are written to the
   * socket, like the send guard of writes; throws to stop it unsent (the token refresh lock's
   * deadline before a rotation).
   */
  beforeSend?: () => void;
  /** Longer than the configured `api.timeout` only (a rotation waits for its answer: see rotateTokens). */
  timeoutMs?: number;
  /** Endpoints that exist on one variant only. */
  variants?: readonly ApiVariant[];
  signal?: AbortSignal;
  /**
   * Shown a 2xx list answer's elements before they are parsed (list-peek.ts); when it starts a
   * request, the call lets the event loop turn once, so that request goes out before this parse.
   */
  peek?: ListPeekHandler;
}

/**
 * Called before a request that changes data at the API (POST, PUT, DELETE; token calls excepted)
 * is handed to the transport, after any wait for the rate budget, and again right before its bytes
 * are written to a connected socket; throws to stop it.
 * The account lease's `assertHeld` (a replica past its lease must not create what the new holder
 * has already reconciled).
 */
export type SendGuard = (endpoint: EndpointRef) => void;

export interface ApiResult<T> {
  data: T;
  envelope: SuccessEnvelope;
  status: number;
}

/**
 * The typed client's engine: auth (spec §5), client-side rate budget, retries (§7), server clock.
 * Endpoint functions in `endpoints/` describe calls; this class makes them.
 */
export class ApiClient {
  readonly variant: ApiVariant;
  readonly baseUrl: string;
  readonly clock: ServerClock;
  readonly budget: RateBudget;
  readonly tokens: TokenManager;
  readonly requestEncoding: RequestEncoding;
  readonly stats: ApiClientStats = {
    requests: 0,
    responsesByStatus: {},
    networkErrors: 0,
    retries: 0,
    rateLimited: 0,
    rateWaitMs: 0,
  };
  private readonly transport: HttpTransport;
  private readonly retry: RetryOptions;
  private readonly logger: Logger;
  private readonly events: ApiClientEvents;
  private sendGuard: SendGuard | undefined;
  /** `api.timeout`: how long a request waits for its answer. */
  private readonly timeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.variant = options.variant;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.logger = options.logger;
    this.events = options.events ?? {};
    this.requestEncoding = options.requestEncoding ?? defaultRequestEncoding(options.variant);
    this.clock = new ServerClock();
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    const rate = options.rateLimit ?? { requestsPerSecond: 8, maxInFlight: 4, adaptive: true };
    this.budget = options.budget ?? new RateBudget(rate);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.transport = new HttpTransport({
      baseUrl: this.baseUrl,
      timeoutMs: this.timeoutMs,
      userAgent: options.userAgent,
      maxSockets: Math.max(4, rate.maxInFlight * 2),
      requestEncoding: this.requestEncoding,
    });
    const credentials = options.credentials;
    if ('clientSecret' in credentials) registerSecret(credentials.clientSecret);
    if ('refreshToken' in credentials) {
      registerSecret(credentials.refreshToken);
      registerSecret(credentials.accessToken);
    }
    this.tokens = new TokenManager({
      variant: options.variant,
      credentials,
      store: options.tokenStore,
      account: accountKey(this.baseUrl, options.variant, credentials),
      clock: this.clock,
      refreshBeforeExpiryMs: options.refreshBeforeExpiryMs ?? 60_000,
      ...(options.refreshLockTtlMs !== undefined ? { refreshLockTtlMs: options.refreshLockTtlMs } : {}),
      ...(options.refreshLockPatienceMs !== undefined ? { refreshLockPatienceMs: options.refreshLockPatienceMs } : {}),
      logger: options.logger.child({ component: 'auth' }),
      endpoints: {
        retrieveToken: (clientId, clientSecret, signal) =>
          this.call({
            method: 'POST',
            route: '/retrieve-token',
            body: { clientId, clientSecret },
            schema: tokenRecordSchema,
            anonymous: true,
            // Asking for tokens again is harmless: the server returns a valid pair either way.
            idempotent: true,
            signal,
          }).then((result) => result.data as TokenRecord),
        refreshAccessToken: (refreshToken, signal) =>
          this.call({ method: 'GET', route: '/token', schema: tokenRecordSchema, bearer: refreshToken, variants: ['main'], signal }).then(
            (result) => result.data as TokenRecord,
          ),
        rotateTokens: (refreshToken, signal, beforeSend, answerWithinMs) =>
          this.call({
            method: 'GET',
            route: '/generate-new-token',
            schema: tokenRecordSchema,
            bearer: refreshToken,
            // Only a bare pair rotates (with client credentials TokenManager takes new tokens from
            // POST /retrieve-token). A failure that may have come after the rotation (a 5xx, a
            // lost connection) is retried: the only way to learn whether the server rotated (a 401
            // if it did), except after a 2xx it cannot read: that did rotate, and is final.
            idempotent: true,
            unreadableSuccessIsFinal: true,
            ...(beforeSend ? { beforeSend } : {}),
            ...(answerWithinMs !== undefined ? { timeoutMs: answerWithinMs } : {}),
            signal,
          }).then((result) => result.data as TokenRecord),
      },
    });
  }

  /** Makes one API call with auth, budget and retries; resolves with validated `data`. */
  async call<T>(spec: ApiCall<T>): Promise<ApiResult<T>> {
    const endpoint: EndpointRef = { method: spec.method, route: spec.route };
    if (spec.variants && !spec.variants.includes(this.variant)) throw new ApiUnsupportedError(endpoint, this.variant);
    const idempotent = spec.idempotent ?? spec.method !== 'POST';
    const startedAt = Date.now();
    let attempt = 0;
    let countedAttempts = 0;
    let refreshedAfter401 = false;
    for (;;) {
      throwIfAborted(spec.signal);
      attempt += 1;
      let bearer: string | undefined;
      try {
        bearer = spec.bearer ?? (spec.anonymous ? undefined : await this.tokens.accessToken(spec.signal, this.rotationGuard()));
        const response = await this.attempt(spec, endpoint, bearer, attempt);
        if (response.status === 401 && !spec.anonymous && !spec.bearer && !refreshedAfter401) {
          // One refresh and one retry per call (spec §5.1, design §2.9).
          refreshedAfter401 = true;
          this.logger.debug({ endpoint: endpoint.route }, '401: refreshing the access token once');
          await this.tokens.onUnauthorized(bearer ?? '', spec.signal, this.rotationGuard());
          this.events.onTokenRefresh?.({ variant: this.variant });
          attempt -= 1;
          continue;
        }
        const succeeded = response.status >= 200 && response.status < 300;
        // The reader may not want this page parsed yet (list-peek.ts): the bytes wait, unparsed.
        if (succeeded && spec.peek?.whenWanted) await spec.peek.whenWanted(spec.signal);
        const scan = spec.peek && succeeded ? scanListBody(response.bytes) : undefined;
        // A request the handler started goes out before this parse; otherwise nothing waits (the
        // body is held no longer than without a handler).
        if (scan && spec.peek && spec.peek(listPeekOf(scan))) await turnOfEventLoop();
        const result = this.interpret(response, endpoint, spec.schema, this.encodingOf(spec.body), scan);
        // Parsed and checked: nothing reads the body's bytes again (a page of loads is ~290 KB).
        releaseBuffer(response.bytes);
        this.budget.onSuccess();
        if (bearer !== undefined && !spec.bearer) this.events.onAuthenticated?.();
        return result;
      } catch (error) {
        if (isAbortError(error) || spec.signal?.aborted) throw error;
        if (error instanceof ApiAuthError) this.events.onAuthFailed?.({ message: error.message });
        if (error instanceof ApiError && error.status === 401 && !spec.anonymous && !spec.bearer) {
          const authError = new ApiAuthError(`${spec.method} ${spec.route} still answered 401 after a token refresh`, { cause: error });
          this.events.onAuthFailed?.({ message: authError.message });
          throw authError;
        }
        if (error instanceof ApiError && error.status === 429) {
          this.stats.rateLimited += 1;
          this.budget.onRateLimited(error.retryAfterMs);
          this.events.onRateLimited?.({ endpoint, retryAfterMs: error.retryAfterMs });
        } else {
          countedAttempts += 1;
        }
        if (spec.unreadableSuccessIsFinal && error instanceof ApiResponseError && error.status >= 200 && error.status < 300) throw error;
        const decision = decideRetry(error, Math.max(1, countedAttempts), idempotent, this.retry);
        if (!decision.retry) throw error;
        const elapsed = Date.now() - startedAt;
        // 429s do not use up attempts (a long backfill must never fail because of them); they
        // are bounded by the elapsed-time limit like everything else.
        if (countedAttempts >= this.retry.maxAttempts || elapsed + decision.delayMs > this.retry.maxElapsedMs) {
          throw new ApiRetriesExhaustedError(endpoint, attempt, elapsed, error);
        }
        this.stats.retries += 1;
        this.events.onRetry?.({ endpoint, reason: decision.reason, delayMs: decision.delayMs, attempt });
        this.logger.debug({ endpoint: `${spec.method} ${spec.route}`, reason: decision.reason, delayMs: decision.delayMs, attempt }, 'retrying');
        await sleep(decision.delayMs, spec.signal);
      }
    }
  }

  /**
   * This client (same transport, budget, tokens, clock and stats) with `guard` run before every
   * request that changes data: one lease tenure's view of the account's client.
   */
  withSendGuard(guard: SendGuard): ApiClient {
    const view = Object.create(Object.getPrototypeOf(this) as object) as ApiClient;
    Object.assign(view, this);
    view.sendGuard = guard;
    return view;
  }

  /**
   * The send guard applied to a brokerage token rotation: it changes the server's state (the old
   * refresh token dies), so a view whose lease is gone must not send one, reads or not.
   */
  private rotationGuard(): (() => void) | undefined {
    const guard = this.sendGuard;
    return guard ? () => guard({ method: 'GET', route: '/generate-new-token' }) : undefined;
  }

  /** Releases sockets. */
  close(): void {
    this.transport.close();
  }

  /**
   * Ends a token refresh's waits for other processes, waits for a rotation in flight (and the save
   * of its pair) to end, then releases the sockets: what shutdown calls, before the state database
   * it stores the pair in is closed.
   */
  async shutdown(): Promise<void> {
    this.tokens.stopWaiting();
    await this.tokens.settled();
    this.close();
  }

  private async attempt(spec: ApiCall<unknown>, endpoint: EndpointRef, bearer: string | undefined, attempt: number): Promise<TransportResponse> {
    const waitedBefore = this.budget.snapshot().waitedMs;
    return this.budget.run(async () => {
      this.stats.rateWaitMs += this.budget.snapshot().waitedMs - waitedBefore;
      // A look before the request goes out (the wait for the budget may have been long), and the
      // last one right before its bytes are written to the socket (write-gate.ts).
      const leaseGuard = this.sendGuard && spec.method !== 'GET' && !spec.anonymous && spec.bearer === undefined ? this.sendGuard : undefined;
      const own = spec.beforeSend;
      const guard = leaseGuard ?? (own ? () => own() : undefined);
      guard?.(endpoint);
      this.stats.requests += 1;
      const started = Date.now();
      try {
        const response = await this.transport.send({
          method: spec.method,
          path: spec.path ?? spec.route,
          endpoint,
          query: spec.query,
          body: spec.body,
          bearer,
          signal: spec.signal,
          ...(guard ? { beforeWrite: () => guard(endpoint) } : {}),
          ...(spec.timeoutMs !== undefined && spec.timeoutMs > this.timeoutMs ? { timeoutMs: spec.timeoutMs } : {}),
        });
        this.clock.observe(response.headers.date, response.receivedAtMs);
        this.stats.responsesByStatus[response.status] = (this.stats.responsesByStatus[response.status] ?? 0) + 1;
        this.events.onResponse?.({ endpoint, status: response.status, durationMs: Date.now() - started, attempt });
        return response;
      } catch (error) {
        if (error instanceof ApiNetworkError) {
          this.stats.networkErrors += 1;
          this.events.onNetworkError?.({ endpoint, code: error.networkCode, attempt });
        }
        throw error;
      }
    }, spec.signal);
  }

  /** How a body went out: uploads are multipart whatever the setting; no body, nothing to blame. */
  private encodingOf(body: unknown): RequestEncoding | undefined {
    if (body === undefined) return undefined;
    return typeof FormData !== 'undefined' && body instanceof FormData ? undefined : this.requestEncoding;
  }

  private interpret<T>(response: TransportResponse, endpoint: EndpointRef, schema: z.ZodType<T>, sent: RequestEncoding | undefined, scan?: ListScan): ApiResult<T> {
    const { status } = response;
    const json = parseJsonBody(response.bytes, scan);
    if (status < 200 || status >= 300) {
      const envelope = json.ok ? errorEnvelopeSchema.safeParse(json.value) : undefined;
      const message = envelope?.success && envelope.data.message !== undefined
        ? String(envelope.data.message)
        : describeNonJsonBody(response);
      const serverRoute = envelope?.success ? envelope.data.self : undefined;
      if (sent && refusesEncoding(status, message, sent)) throw new ApiEncodingError({ status, endpoint, serverMessage: message, serverRoute, sent });
      const serverDate = response.headers.date ? Date.parse(response.headers.date) : Date.now();
      throw new ApiError({
        status,
        endpoint,
        serverMessage: message,
        serverRoute,
        retryAfterMs: status === 429 ? parseRetryAfter(response.headers['retry-after'], Number.isNaN(serverDate) ? Date.now() : serverDate) : undefined,
      });
    }
    if (!json.ok) {
      // A 2xx that is not JSON: an HTML page from a proxy, or a body cut short. Worth a retry.
      throw new ApiResponseError(endpoint, status, `${json.reason}; ${describeNonJsonBody(response)}`, true);
    }
    if (typeof json.value !== 'object' || json.value === null || Array.isArray(json.value) || !('data' in json.value)) {
      throw new ApiResponseError(endpoint, status, 'the body is not a response envelope (no `data`)', false);
    }
    const envelope = successEnvelopeSchema.safeParse(json.value);
    if (!envelope.success) {
      // Name the field that is wrong (e.g. `count: "many"`), not a generic "no data".
      const first = envelope.error.issues[0];
      const where = first && first.path.length > 0 ? first.path.join('.') : 'envelope';
      throw new ApiResponseError(endpoint, status, `envelope ${where}: ${first?.message ?? 'invalid'}`, false);
    }
    const data = schema.safeParse(envelope.data.data);
    if (!data.success) {
      const first = data.error.issues[0];
      const where = first ? `data${first.path.length ? '.' + first.path.join('.') : ''}` : 'data';
      throw new ApiResponseError(endpoint, status, `${where}: ${first?.message ?? 'invalid'}`, false);
    }
    // A record read by reference comes in the API's member order, as list elements do (api-order.ts).
    return { data: inApiOrder(data.data, (json.value as { data: unknown }).data), envelope: envelope.data, status };
  }
}

/**
 * 415 Unsupported Media Type is the server refusing the encoding; a 400 that asks for multipart
 * while JSON went out means the same (the spec does not say which status a server uses, §7).
 */
function refusesEncoding(status: number, message: string, sent: RequestEncoding): boolean {
  if (status === 415) return true;
  return status === 400 && sent === 'json' && /multipart/i.test(message);
}

function describeNonJsonBody(response: TransportResponse): string {
  const type = response.headers['content-type'] ?? 'no content type';
  const excerpt = response.body.replace(/\s+/g, ' ').trim().slice(0, 120);
  return `${type}, ${response.body.length} bytes${excerpt ? `: "${excerpt}"` : ''}`;
}
