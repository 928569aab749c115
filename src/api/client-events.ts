import type { EndpointRef } from './errors.js';

/**
 * Observations the client reports (metrics, run statistics). All optional; none may throw.
 * Nothing here carries a token, a header or a body.
 */
export interface ApiClientEvents {
  onResponse?(event: { endpoint: EndpointRef; status: number; durationMs: number; attempt: number }): void;
  onNetworkError?(event: { endpoint: EndpointRef; code: string | undefined; attempt: number }): void;
  onRetry?(event: { endpoint: EndpointRef; reason: string; delayMs: number; attempt: number }): void;
  onRateLimited?(event: { endpoint: EndpointRef; retryAfterMs: number | undefined }): void;
  onTokenRefresh?(event: { variant: string }): void;
  /** An authenticated call was answered: the credentials work (notifications: authentication recovered). */
  onAuthenticated?(): void;
  /** No usable token: the token request was refused or the refresh token is dead (`message` names which). */
  onAuthFailed?(event: { message: string }): void;
}

/** Counters every client keeps for run summaries and benchmarks. */
export interface ApiClientStats {
  requests: number;
  responsesByStatus: Record<number, number>;
  networkErrors: number;
  retries: number;
  rateLimited: number;
  rateWaitMs: number;
}

/** One set of handlers that calls each of `sets` in turn (metrics and reachability both listen). */
export function combineClientEvents(...sets: readonly ApiClientEvents[]): ApiClientEvents {
  const each =
    <K extends keyof ApiClientEvents>(key: K) =>
    (event: Parameters<NonNullable<ApiClientEvents[K]>>[0]): void => {
      for (const set of sets) (set[key] as ((e: typeof event) => void) | undefined)?.(event);
    };
  return {
    onResponse: each('onResponse'),
    onNetworkError: each('onNetworkError'),
    onRetry: each('onRetry'),
    onRateLimited: each('onRateLimited'),
    onTokenRefresh: each('onTokenRefresh'),
    onAuthenticated: () => {
      for (const set of sets) set.onAuthenticated?.();
    },
    onAuthFailed: each('onAuthFailed'),
  };
}
