import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiNetworkError, ApiRetriesExhaustedError } from '../../src/api/errors.js';
import { isExpectedFailure, serializeLogError } from '../../src/util/log-errors.js';
import { createLogger } from '../../src/util/logger.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { repeatedKeys, topLevelKeys } from '../helpers/json-keys.js';

/** Lines reach the capture through a Writable that calls back on the next tick. */
const flushed = () => new Promise<void>((resolve) => setImmediate(resolve));

const refused = () =>
  new ApiRetriesExhaustedError(
    { method: 'POST', route: '/retrieve-token' },
    2,
    10,
    new ApiNetworkError({ method: 'POST', route: '/retrieve-token' }, 'ECONNREFUSED', 'connection failed: connect ECONNREFUSED 127.0.0.1:9', false),
  );

describe('the duplicate-key scanner', () => {
  it('sees the repeats JSON.parse hides', () => {
    expect(topLevelKeys('{"a":1,"b":{"a":2},"a":"x,\\"a\\":"}')).toEqual(['a', 'b', 'a']);
    expect(repeatedKeys('{"a":1,"b":[{"a":1}],"c":"a"}')).toEqual([]);
  });
});

describe('JSON log lines', () => {
  it('a child re-binding a key, and a call repeating a bound key, write each key once (the most specific value)', async () => {
    const { logger, lines } = capturingLogger('debug');
    const api = logger.child({ component: 'api' }).child({ component: 'auth' });
    api.info('token retrieved');
    // What create-connectors and a connector both do: bind `connector`.
    const connector = logger.child({ component: 'connectors' }).child({ connector: 'out' }).child({ connector: 'out', type: 'csv' });
    connector.debug({ rows: 3 }, 'batch written');
    const stream = logger.child({ stream: 'loads' });
    stream.info({ stream: 'loads', delivered: 1 }, 'run finished');
    stream.info('after: the binding is back');
    await flushed();
    expect(lines.map(repeatedKeys)).toEqual([[], [], [], []]);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed[0]).toMatchObject({ component: 'auth', msg: 'token retrieved' });
    expect(parsed[1]).toMatchObject({ component: 'connectors', connector: 'out', type: 'csv', rows: 3 });
    expect(parsed[2]).toMatchObject({ stream: 'loads', delivered: 1 });
    expect(parsed[3]).toMatchObject({ stream: 'loads', msg: 'after: the binding is back' });
  });

  it('an expected failure is its type, code and message, naming each cause once, without a stack', async () => {
    const { logger, lines } = capturingLogger();
    logger.error({ err: refused() }, 'stream loads failed');
    await flushed();
    const line = JSON.parse(lines[0]!) as { err: Record<string, unknown> };
    expect(line.err).toEqual({
      type: 'ApiRetriesExhaustedError',
      code: 'API_RETRIES_EXHAUSTED',
      attempts: 2,
      message: 'POST /retrieve-token gave up after 2 attempts in 0 s: connection failed: connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)',
    });
    expect(lines[0]).not.toContain('stack');
  });

  it('an unexpected error keeps its stack', async () => {
    const { logger, lines } = capturingLogger();
    logger.error({ err: new TypeError('cannot read x of undefined') }, 'bug');
    await flushed();
    const line = JSON.parse(lines[0]!) as { err: { stack: string } };
    expect(line.err.stack).toContain('TypeError: cannot read x of undefined\n    at ');
  });

  it('classifies system and driver failures as expected, programming errors as unexpected', () => {
    const system = Object.assign(new Error('getaddrinfo ENOTFOUND db.example'), { code: 'ENOTFOUND' });
    const pgAuth = Object.assign(new Error('password authentication failed for user "erp"'), { code: '28P01' });
    const wrapped = new Error('cannot connect to postgres://erp@db/erp', { cause: system });
    expect([system, pgAuth, wrapped, refused(), new DOMException('timed out', 'TimeoutError')].map(isExpectedFailure)).toEqual([true, true, true, true, true]);
    const typeWithCode = Object.assign(new TypeError('bad arg'), { code: 'ERR_INVALID_ARG_TYPE' });
    expect([new Error('plain'), typeWithCode, 'a string'].map(isExpectedFailure)).toEqual([false, false, false]);
    expect(serializeLogError('run failed: x')).toBe('run failed: x');
  });
});

describe('pretty (terminal) output', () => {
  it('is one line per event, without null fields, an expected failure as its message', async () => {
    let text = '';
    const destination = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        text += chunk.toString();
        callback();
      },
    });
    const logger = createLogger({ pretty: true, destination });
    const api = logger.child({ component: 'api' });
    api.info({ stream: 'loads', delivered: 3, error: null, nested: { a: 1, b: [1, 2] } }, 'run finished');
    api.error({ err: refused() }, 'token refresh failed');
    logger.warn('draining');
    const deadline = Date.now() + 10_000;
    while (text.split('\n').filter(Boolean).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // Colours off for the assertions.
    const lines = text.replace(/\u001b\[[0-9;]*m/g, '').split('\n').filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \(api\) run finished \{"stream":"loads","delivered":3,"nested":\{"a":1,"b":\[1,2\]\}\}$/);
    expect(lines[0]).not.toContain('null');
    expect(lines[1]).toMatch(/ERROR: \(api\) token refresh failed \{"error":"POST \/retrieve-token gave up after 2 attempts in 0 s: connection failed: connect ECONNREFUSED 127\.0\.0\.1:9 \(ECONNREFUSED\)"\}$/);
    expect(lines[2]).toMatch(/WARN: draining$/);
  });
});
