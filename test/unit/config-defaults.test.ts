import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse-config.js';
import { demoConfig, DEMO_CONNECTOR } from '../../src/app/demo-config.js';
import { validateDeployment } from '../../src/app/validate-deployment.js';
import { minimalRaw } from '../helpers/config-fixtures.js';

describe('defaults', () => {
  it('fills every default and converts durations to milliseconds', () => {
    const config = parseConfig(minimalRaw(), { baseDir: '/srv/cfg' });
    expect(config.api).toEqual({
      variant: 'main',
      baseUrl: 'https://api.example.com/v1',
      auth: { clientId: 'client-1', clientSecret: 'client-secret-1' },
      requestEncoding: 'json',
      refreshBeforeExpiry: 60_000,
      timeout: 30_000,
      rateLimit: { requestsPerSecond: 8, maxInFlight: 4, adaptive: true },
      retry: { maxAttempts: 8, maxElapsed: 600_000, baseDelay: 500, maxDelay: 60_000 },
    });
    expect(config.state).toEqual({ path: '/srv/cfg/data/freight-sync.sqlite', schema: 'freight_sync', poolSize: 10 });
    expect(config.cluster).toEqual({ leaseTtl: 30_000, claimInterval: 5_000, heartbeat: 10_000 });
    // §5.2: brokerage bodies are multipart unless the file says otherwise.
    const brokerage = (encoding?: string) =>
      parseConfig({ ...minimalRaw(), api: { ...(minimalRaw().api as object), variant: 'brokerage', ...(encoding ? { requestEncoding: encoding } : {}) } }, { baseDir: '/srv/cfg' }).api.requestEncoding;
    expect(brokerage()).toBe('multipart');
    expect(brokerage('json')).toBe('json');
    expect(config.log).toEqual({ level: 'info', pretty: 'auto' });
    expect(config.sync.defaults).toEqual({
      schedule: '*/5 * * * *',
      lookback: 600_000,
      safetyLag: 30_000,
      pageSize: 50,
      initialFrom: '2024-01-01T00:00:00.000Z',
      maxWindow: 7 * 86_400_000,
      minWindow: 60_000,
      lateWriteCover: 'auto',
    });
    expect(config.outbound).toEqual({
      enabled: false,
      sources: [],
      pollInterval: 30_000,
      concurrency: 8,
      maxAttempts: 10,
      backoff: { base: 2_000, max: 600_000 },
      reconcileBy: 'secondaryReferenceNo',
      reconcileDelay: 2_000,
      setSecondaryReferenceNo: true,
    });
    expect(config.webhooks).toEqual({
      enabled: false,
      listen: '127.0.0.1:8080',
      path: '/webhooks/freight',
      maxBodyBytes: 1_048_576,
      dedupeWindow: 3_600_000,
      catchUpInterval: 900_000,
      catchUpOverlap: 120_000,
      catchUpMaxAge: 7 * 86_400_000,
      maxAttempts: 10,
      batchSize: 100,
    });
    expect(config.http).toEqual({ enabled: true, listen: '127.0.0.1:9090', readyCacheTtl: 30_000, checkTimeout: 5_000, apiUnreachableAfter: 60_000, console: { enabled: false } });
    expect(config.connectors['erp_csv']).toEqual({ type: 'csv', options: { directory: './out' }, mappings: {} });
  });

  it('lets a stream override sync.defaults key by key', () => {
    const raw = minimalRaw();
    raw.sync.defaults = { lookback: 'PT20M', pageSize: 25 };
    raw.sync.streams.loads = { sinks: ['erp_csv'], lookback: 'PT1H', schedule: '0 * * * *', options: { includeDeleted: true } };
    raw.sync.streams.invoices = { sinks: ['erp_csv'], enabled: false };
    const { streams } = parseConfig(raw).sync;
    expect(streams.loads).toEqual({
      enabled: true,
      sinks: ['erp_csv'],
      schedule: '0 * * * *',
      lookback: 3_600_000,
      safetyLag: 30_000,
      pageSize: 25,
      initialFrom: '2024-01-01T00:00:00.000Z',
      maxWindow: 604_800_000,
      minWindow: 60_000,
      lateWriteCover: 'auto',
      options: { includeDeleted: true },
    });
    expect(streams.invoices).toMatchObject({ enabled: false, lookback: 1_200_000, pageSize: 25 });
    expect(streams.bills).toBeUndefined();
  });

  it('normalises baseUrl and initialFrom', () => {
    const raw = minimalRaw();
    raw.api.baseUrl = 'https://api.example.com/v1/';
    raw.sync.defaults = { initialFrom: '2024-03-01T02:00:00+02:00' };
    const config = parseConfig(raw);
    expect(config.api.baseUrl).toBe('https://api.example.com/v1');
    expect(config.sync.defaults.initialFrom).toBe('2024-03-01T00:00:00.000Z');
  });

  it('accepts the pre-issued token form', () => {
    const raw = minimalRaw();
    raw.api.auth = { accessToken: 'access-123456', refreshToken: 'refresh-123456' };
    expect(parseConfig(raw).api.auth).toEqual({ accessToken: 'access-123456', refreshToken: 'refresh-123456' });
  });
});

describe('demoConfig', () => {
  it.each(['main', 'brokerage'] as const)('builds a valid %s config writing CSV to outputDir', async (variant) => {
    const config = demoConfig({
      baseUrl: 'http://127.0.0.1:4010/v1',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-1',
      variant,
      stateDir: '/tmp/demo-state',
      outputDir: '/tmp/demo-out',
    });
    expect(config.api.variant).toBe(variant);
    expect(config.state.path).toBe(path.resolve('/tmp/demo-state/freight-sync.sqlite'));
    expect(config.connectors[DEMO_CONNECTOR]).toEqual({ type: 'csv', options: { directory: '/tmp/demo-out' }, mappings: {} });
    expect(config.sync.streams.loads?.sinks).toEqual([DEMO_CONNECTOR]);
    expect(config.sync.streams.customers?.enabled).toBe(true);
    // Main-only endpoints are not polled against the brokerage simulator.
    expect(config.sync.streams.bills === undefined).toBe(variant === 'brokerage');
    // The whole deployment, as `demo` checks it before it starts (stream options such as documentFiles' filesTo).
    await validateDeployment({ config, filePath: '/tmp/demo-state/demo config', baseDir: '/tmp/demo-state' });
  });
});
