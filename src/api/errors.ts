import { FreightSyncError } from '../util/errors.js';
import { scrubSecrets } from '../util/secrets.js';

/** Where a request went, for error messages: `GET /loads`. Never includes query values or headers. */
export interface EndpointRef {
  method: string;
  /** The route template, e.g. `/loads/:reference_number`. */
  route: string;
}

export function describeEndpoint(endpoint: EndpointRef): string {
  return `${endpoint.method} ${endpoint.route}`;
}

/**
 * The server answered with an error status. Built from the error envelope (spec §2.2) when the
 * body is one, otherwise from the status line and a short, scrubbed excerpt of the body.
 */
export class ApiError extends FreightSyncError {
  readonly status: number;
  readonly endpoint: EndpointRef;
  /** The `self` route the server reported, when the body was an error envelope. */
  readonly serverRoute: string | undefined;
  readonly serverMessage: string;
  /** Seconds or HTTP date from `Retry-After`, already converted to milliseconds from now. */
  readonly retryAfterMs: number | undefined;

  constructor(args: {
    status: number;
    endpoint: EndpointRef;
    serverMessage: string;
    serverRoute?: string;
    retryAfterMs?: number;
  }) {
    const message = scrubSecrets(
      `${describeEndpoint(args.endpoint)} failed with HTTP ${args.status}: ${args.serverMessage}` +
        (args.serverRoute ? ` (route ${args.serverRoute})` : ''),
    );
    super(args.status === 401 ? 'API_UNAUTHORIZED' : `API_HTTP_${args.status}`, message);
    this.status = args.status;
    this.endpoint = args.endpoint;
    this.serverRoute = args.serverRoute;
    this.serverMessage = scrubSecrets(args.serverMessage);
    this.retryAfterMs = args.retryAfterMs;
  }
}

/** No usable HTTP answer: connection refused or reset, socket dropped, timeout. */
export class ApiNetworkError extends FreightSyncError {
  readonly endpoint: EndpointRef;
  /** True when the request may have reached the server (anything but a refused connection). */
  readonly mayHaveBeenProcessed: boolean;
  readonly networkCode: string | undefined;

  constructor(endpoint: EndpointRef, networkCode: string | undefined, detail: string, mayHaveBeenProcessed: boolean) {
    super('API_NETWORK', scrubSecrets(`${describeEndpoint(endpoint)}: ${detail}${networkCode ? ` (${networkCode})` : ''}`));
    this.endpoint = endpoint;
    this.networkCode = networkCode;
    this.mayHaveBeenProcessed = mayHaveBeenProcessed;
  }
}

/**
 * A 2xx answer whose body is not what the spec promises: not JSON (an HTML page, a truncated
 * body) or an envelope/resource that fails its schema. Names the endpoint and the JSON path.
 */
export class ApiResponseError extends FreightSyncError {
  readonly endpoint: EndpointRef;
  readonly status: number;
  /** A truncated or non-JSON body is worth retrying; a body that parses but breaks the schema is not. */
  readonly retryable: boolean;

  constructor(endpoint: EndpointRef, status: number, detail: string, retryable: boolean) {
    super('API_BAD_RESPONSE', scrubSecrets(`${describeEndpoint(endpoint)} returned an unusable body (HTTP ${status}): ${detail}`));
    this.endpoint = endpoint;
    this.status = status;
    this.retryable = retryable;
  }
}

/** Credentials are missing, rejected, or a rotated refresh token was lost. Not retryable. */
export class ApiAuthError extends FreightSyncError {
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? 'API_AUTH', scrubSecrets(message), options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/**
 * The account's tokens are truly lost (marked `reauth_required` in the shared state): no call is
 * made for it, by this process or any other on the same state, until the user gives new
 * credentials. Thrown at once, without asking the token endpoints again.
 */
export class ReauthRequiredError extends ApiAuthError {
  constructor(
    readonly account: string,
    readonly reason: string,
    readonly since: string,
    readonly remedy: string,
    options?: { cause?: unknown },
  ) {
    super(`account ${account} needs re-authentication (reauth_required since ${since}): ${reason}; ${remedy}`, { ...options, code: 'API_REAUTH_REQUIRED' });
  }
}

/** The endpoint does not exist on this deployment (e.g. `/bills` on brokerage). */
export class ApiUnsupportedError extends FreightSyncError {
  constructor(endpoint: EndpointRef, variant: string) {
    super('API_UNSUPPORTED', `${describeEndpoint(endpoint)} is not available on the ${variant} variant`);
  }
}

/** Retries were exhausted (attempts or elapsed time); `cause` is the last failure. */
export class ApiRetriesExhaustedError extends FreightSyncError {
  readonly attempts: number;
  readonly lastError: unknown;

  constructor(endpoint: EndpointRef, attempts: number, elapsedMs: number, lastError: unknown) {
    // The last failure usually starts with the same `METHOD /route: `; name the endpoint once.
    const prefix = `${describeEndpoint(endpoint)}: `;
    const lastMessage = lastError instanceof Error ? lastError.message : String(lastError);
    const last = lastMessage.startsWith(prefix) ? lastMessage.slice(prefix.length) : lastMessage;
    super(
      'API_RETRIES_EXHAUSTED',
      scrubSecrets(`${describeEndpoint(endpoint)} gave up after ${attempts} attempts in ${Math.round(elapsedMs / 1000)} s: ${last}`),
      { cause: lastError },
    );
    this.attempts = attempts;
    this.lastError = lastError;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

/**
 * The server refused the body's encoding (HTTP 415, or a 400 that asks for multipart): every write
 * would fail the same way, so the message names the setting to change, `api.requestEncoding`.
 */
export class ApiEncodingError extends ApiError {
  readonly sent: 'json' | 'multipart';

  constructor(args: { status: number; endpoint: EndpointRef; serverMessage: string; serverRoute?: string; sent: 'json' | 'multipart' }) {
    super(args);
    this.sent = args.sent;
    const answer = `it answered HTTP ${args.status}: ${this.serverMessage}`;
    this.message =
      args.sent === 'json'
        ? `${describeEndpoint(args.endpoint)}: the server expects multipart/form-data request bodies, not JSON (${answer}); set api.requestEncoding: multipart`
        : `${describeEndpoint(args.endpoint)}: the server refused the multipart/form-data body (${answer}); set api.requestEncoding: json`;
  }
}

/**
 * A token rotation was not sent: the refresh lock had passed its deadline (this process was
 * paused or starved), so another process may hold it and have rotated already. Not an auth
 * failure: the next refresh adopts what the other stored.
 */
export class TokenLockExpiredError extends FreightSyncError {
  constructor(account: string) {
    super('API_TOKEN_LOCK_EXPIRED', `the token refresh lock of ${account} passed its deadline before the rotation was sent; not sent (another process may have refreshed meanwhile)`);
  }
}
