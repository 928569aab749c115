import type { ApiClientEvents } from '../api/client-events.js';
import { describeEndpoint } from '../api/errors.js';

/** The API has not answered usefully for longer than the readiness window. */
export class ApiUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApiUnreachableError';
  }
}

export interface ApiReachabilitySnapshot {
  /** Last answer that shows the API works: any status below 500 (a 4xx is the API answering). */
  lastSuccessAt: string | null;
  /** Last network error, timeout or 5xx. */
  lastFailureAt: string | null;
  lastFailure: string | null;
  /** First failure since the last success; null while the API answers. */
  unreachableSince: string | null;
}

/**
 * Whether the API answered recently, from what the client actually saw (ApiClientEvents): every
 * response below 500 proves it reachable; network errors, timeouts and 5xx answers do not. Fed by
 * the daemon's own traffic, so `/readyz` sees an outage while a token is still cached.
 */
export class ApiReachability {
  private lastSuccessMs: number | undefined;
  private lastFailureMs: number | undefined;
  private lastFailure: string | undefined;
  private unreachableSinceMs: number | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** Handlers for the API client; none throws. */
  events(): ApiClientEvents {
    return {
      onResponse: ({ endpoint, status }) => (status >= 500 ? this.failed(`${describeEndpoint(endpoint)} answered HTTP ${status}`) : this.succeeded()),
      onNetworkError: ({ endpoint, code }) => this.failed(`${describeEndpoint(endpoint)}: ${code ?? 'no answer'}`),
    };
  }

  /** Milliseconds since the API last answered or failed to (undefined: never tried). */
  idleMs(): number | undefined {
    const last = Math.max(this.lastSuccessMs ?? -Infinity, this.lastFailureMs ?? -Infinity);
    return Number.isFinite(last) ? this.now() - last : undefined;
  }

  /** Throws when every call for longer than `windowMs` failed, naming how long and the last failure. */
  assertReachable(windowMs: number): void {
    if (this.unreachableSinceMs === undefined) return;
    const downMs = this.now() - this.unreachableSinceMs;
    if (downMs < windowMs) return;
    throw new ApiUnreachableError(
      `the API has not answered for ${Math.round(downMs / 1000)} s (since ${new Date(this.unreachableSinceMs).toISOString()}); last failure: ${this.lastFailure ?? 'unknown'}`,
    );
  }

  snapshot(): ApiReachabilitySnapshot {
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
    return {
      lastSuccessAt: iso(this.lastSuccessMs),
      lastFailureAt: iso(this.lastFailureMs),
      lastFailure: this.lastFailure ?? null,
      unreachableSince: iso(this.unreachableSinceMs),
    };
  }

  private succeeded(): void {
    this.lastSuccessMs = this.now();
    this.unreachableSinceMs = undefined;
  }

  private failed(description: string): void {
    const now = this.now();
    this.lastFailureMs = now;
    this.lastFailure = description;
    this.unreachableSinceMs ??= now;
  }
}
