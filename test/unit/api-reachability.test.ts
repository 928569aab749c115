import { describe, expect, it } from 'vitest';
import { ApiReachability } from '../../src/ops/api-reachability.js';

const endpoint = { method: 'GET', route: '/loads' };

describe('ApiReachability', () => {
  it('fails only after network errors and 5xx answers lasted the whole window; any answer below 500 clears it', () => {
    let now = 1_000_000;
    const reach = new ApiReachability(() => now);
    const events = reach.events();
    expect(reach.idleMs()).toBeUndefined();
    expect(() => reach.assertReachable(60_000)).not.toThrow();

    events.onResponse!({ endpoint, status: 404, durationMs: 5, attempt: 1 });
    events.onResponse!({ endpoint, status: 401, durationMs: 5, attempt: 1 });
    now += 120_000;
    // 4xx answers are the API answering: no outage however long ago they were.
    expect(() => reach.assertReachable(60_000)).not.toThrow();
    expect(reach.idleMs()).toBe(120_000);

    events.onNetworkError!({ endpoint, code: 'ECONNREFUSED', attempt: 1 });
    now += 30_000;
    events.onResponse!({ endpoint, status: 503, durationMs: 5, attempt: 2 });
    expect(() => reach.assertReachable(60_000)).not.toThrow();
    now += 30_000;
    expect(() => reach.assertReachable(60_000)).toThrow(/^the API has not answered for 60 s \(since .*\); last failure: GET \/loads answered HTTP 503$/);
    expect(reach.snapshot()).toMatchObject({ lastFailure: 'GET /loads answered HTTP 503', unreachableSince: new Date(1_120_000).toISOString() });

    events.onResponse!({ endpoint, status: 200, durationMs: 5, attempt: 1 });
    expect(() => reach.assertReachable(60_000)).not.toThrow();
    expect(reach.snapshot().unreachableSince).toBeNull();
  });
});
