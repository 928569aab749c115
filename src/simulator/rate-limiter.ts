/**
 * One token bucket for the whole server (the API limits an account, not a connection). When empty,
 * `take` says how long until the next token, which becomes `Retry-After`.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(private config: { requestsPerSecond: number; burst: number } | null) {
    this.tokens = config?.burst ?? 0;
    this.last = Date.now();
  }

  reconfigure(config: { requestsPerSecond: number; burst: number } | null): void {
    this.config = config;
    this.tokens = config?.burst ?? 0;
    this.last = Date.now();
  }

  /** Returns 0 when allowed, else ms until a token is available. */
  take(): number {
    const config = this.config;
    if (!config) return 0;
    const now = Date.now();
    this.tokens = Math.min(config.burst, this.tokens + ((now - this.last) / 1000) * config.requestsPerSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / config.requestsPerSecond) * 1000);
  }
}

/** Retry-After value: whole seconds (at least 1), or an HTTP-date on the server clock. */
export function retryAfterValue(waitMs: number, format: 'seconds' | 'http-date', serverNowMs: number): string {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return format === 'seconds' ? String(seconds) : new Date(serverNowMs + seconds * 1000).toUTCString();
}
