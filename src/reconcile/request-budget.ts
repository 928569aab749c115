import type { ApiClient } from '../api/api-client.js';
import { FreightSyncError } from '../util/errors.js';

/** The request budget of one reconcile ran out: what was not checked is reported, never dropped. */
export class ReconcileBudgetError extends FreightSyncError {
  constructor(max: number) {
    super('RECONCILE_BUDGET', `reconcile: the request budget of ${max} API requests is used up (--max-requests / reconcile.maxRequests)`);
  }
}

/**
 * Caps the API requests of one reconcile (`--max-requests`) so it is safe to run against
 * production. Counts every request the client sends (token requests and retries included) from
 * the moment it is created; a call starts only while a request is left, counting the calls in
 * flight, so the total stays within the cap unless a started call has to retry.
 */
export class RequestBudget {
  private readonly start: number;
  private inFlight = 0;

  constructor(
    private readonly client: ApiClient,
    readonly max: number,
  ) {
    this.start = client.stats.requests;
  }

  get used(): number {
    return this.client.stats.requests - this.start;
  }

  get exhausted(): boolean {
    return this.used + this.inFlight >= this.max;
  }

  /**
   * The client as the reconcile's readers see it: the same client (its clock, tokens, rate
   * budget and retries), but `call` refuses to start once the budget is spent.
   */
  guard(): ApiClient {
    const budget = this;
    const call: ApiClient['call'] = async (spec) => {
      if (budget.exhausted) throw new ReconcileBudgetError(budget.max);
      budget.inFlight += 1;
      try {
        return await budget.client.call(spec);
      } finally {
        budget.inFlight -= 1;
      }
    };
    return new Proxy(this.client, {
      get(target, property) {
        if (property === 'call') return call;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}

export function isBudgetError(error: unknown): error is ReconcileBudgetError {
  return error instanceof ReconcileBudgetError;
}
