import type { ApiCall, ApiClient, ApiResult } from '../../src/api/api-client.js';
import { ApiError } from '../../src/api/errors.js';
import type { SuccessEnvelope } from '../../src/api/schemas/envelope.js';
import { ServerClock } from '../../src/api/server-clock.js';
import type { ApiVariant } from '../../src/api/variant.js';

/**
 * A scripted, in-memory stand-in for `ApiClient` for unit tests: no HTTP, no simulator. Each
 * call is recorded; the answer comes from the handler registered for `METHOD route` (the route
 * template the endpoint functions pass, e.g. `GET /invoices/:reference_number`). A handler
 * returns the `data` of the envelope (optionally with `count`), or throws (e.g. `apiError(404)`).
 * Answers go through the call's zod schema, as the real client does, so a fake answer the real
 * client would reject fails the test instead of passing silently.
 */
export interface RecordedCall {
  method: string;
  route: string;
  path: string;
  query: Record<string, unknown>;
  body: unknown;
}

export type FakeAnswer = { data: unknown; count?: number; pageToken?: string | null };
export type FakeHandler = (call: RecordedCall, index: number) => FakeAnswer | Promise<FakeAnswer>;

export class FakeApi {
  readonly calls: RecordedCall[] = [];
  readonly clock: ServerClock;
  private readonly handlers = new Map<string, FakeHandler>();

  /**
   * @param serverNowMs the server's clock; the local clock is pinned to `localNowMs`, so
   *   `clock.now()` is exactly `serverNowMs` once the clock has been observed.
   * @param clockKnown false models a process that has not seen a `Date` header yet: the first
   *   call made through the fake observes it.
   */
  constructor(
    readonly variant: ApiVariant = 'main',
    private readonly serverNowMs = Date.parse('2024-06-01T12:00:00.000Z'),
    clockKnown = true,
    private readonly localNowMs = Date.parse('2024-06-01T11:00:00.000Z'),
  ) {
    this.clock = new ServerClock(() => this.localNowMs);
    if (clockKnown) this.observeClock();
  }

  private observeClock(): void {
    this.clock.observe(new Date(this.serverNowMs).toUTCString(), this.localNowMs);
  }

  on(methodAndRoute: string, handler: FakeHandler): this {
    this.handlers.set(methodAndRoute, handler);
    return this;
  }

  callsTo(methodAndRoute: string): RecordedCall[] {
    return this.calls.filter((c) => `${c.method} ${c.route}` === methodAndRoute);
  }

  async call<T>(spec: ApiCall<T>): Promise<ApiResult<T>> {
    spec.signal?.throwIfAborted();
    const recorded: RecordedCall = {
      method: spec.method,
      route: spec.route,
      path: spec.path ?? spec.route,
      query: { ...(spec.query ?? {}) },
      body: spec.body,
    };
    this.calls.push(recorded);
    const key = `${spec.method} ${spec.route}`;
    const handler = this.handlers.get(key);
    if (!handler) throw new Error(`FakeApi: no handler for ${key}`);
    const index = this.callsTo(key).length - 1;
    const answer = await handler(recorded, index);
    this.observeClock();
    const envelope: SuccessEnvelope = { data: answer.data, count: answer.count, other: answer.pageToken === undefined ? undefined : { pageToken: answer.pageToken } };
    return { data: spec.schema.parse(answer.data), envelope, status: 200 };
  }

  /** Typed as the real client for the code under test (it only uses variant, clock and call). */
  asClient(): ApiClient {
    return this as unknown as ApiClient;
  }
}

export function apiError(status: number, method: string, route: string, serverMessage = `HTTP ${status}`): ApiError {
  return new ApiError({ status, endpoint: { method, route }, serverMessage });
}
