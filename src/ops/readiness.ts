import { describeError } from '../util/errors.js';

export interface CheckResult {
  ok: boolean;
  error?: string;
  /** When the result was computed (cached results keep their time). */
  checkedAt: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

export interface ReadinessCheck {
  name: string;
  /** Cached for `readyCacheTtl`: the API and sinks must not be hit on every probe. */
  cached: boolean;
  /** Reported in the body but not part of the verdict (one account's problem among several). */
  advisory?: boolean;
  run(signal: AbortSignal): Promise<void>;
}

/**
 * `/readyz`: the state database answers, the API answered recently and its credentials are valid
 * (ApiReachability from the client's own traffic, then an access token — the token manager's
 * cached token, or a refresh/retrieve when it has none; see apiReady in compose.ts), and every sink
 * connector that has a `check()` passes it. Results of the API and sink checks are cached so a
 * probe every few seconds costs nothing; failures are cached too, so wrong credentials do not
 * turn probes into a request storm against the token endpoint.
 */
export class Readiness {
  private readonly cache = new Map<string, { result: CheckResult; at: number }>();
  private readonly checks: readonly ReadinessCheck[];
  private stopping = false;

  /** `checks` come from the composition root: state DB ping, API token, each sink's `check()`. */
  constructor(
    checks: readonly ReadinessCheck[],
    private readonly options: { ttlMs: number; timeoutMs: number },
  ) {
    this.checks = checks;
  }

  /** From now on /readyz answers 503: the orchestrator stops routing to a draining daemon. */
  markStopping(): void {
    this.stopping = true;
  }

  async evaluate(): Promise<ReadinessReport> {
    const entries = await Promise.all(this.checks.map(async (check) => [check.name, await this.result(check)] as const));
    const checks = Object.fromEntries(entries) as Record<string, CheckResult>;
    const gating = new Set(this.checks.filter((check) => !check.advisory).map((check) => check.name));
    if (this.stopping) {
      checks.shutdown = { ok: false, error: 'the daemon is stopping', checkedAt: new Date().toISOString() };
      gating.add('shutdown');
    }
    return { ready: [...gating].every((name) => checks[name]?.ok === true), checks };
  }

  private async result(check: ReadinessCheck): Promise<CheckResult> {
    const cached = this.cache.get(check.name);
    if (check.cached && cached && Date.now() - cached.at < this.options.ttlMs) return cached.result;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let result: CheckResult;
    try {
      await Promise.race([
        check.run(signal),
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error(`no answer within ${this.options.timeoutMs} ms`)), { once: true })),
      ]);
      result = { ok: true, checkedAt: new Date().toISOString() };
    } catch (error) {
      result = { ok: false, error: describeError(error), checkedAt: new Date().toISOString() };
    }
    this.cache.set(check.name, { result, at: Date.now() });
    return result;
  }
}
