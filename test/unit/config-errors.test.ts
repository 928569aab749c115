import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../src/config/parse-config.js';
import { formatZodIssues } from '../../src/config/format-issues.js';
import { closestKey } from '../../src/config/closest-key.js';
import { ConfigError } from '../../src/util/errors.js';
import { configIssues, minimalRaw } from '../helpers/config-fixtures.js';

/** The issues of parsing `minimalRaw()` after `edit` changed it. */
function issuesOf(edit: (raw: Record<string, any>) => void): Promise<readonly string[]> {
  const raw = minimalRaw();
  edit(raw);
  return configIssues(() => parseConfig(raw, { source: 'test.yaml' }));
}

describe('config errors name the dotted path and the problem', () => {
  it.each<[string, (raw: Record<string, any>) => void, string]>([
    ['bad duration', (r) => (r.sync.streams.loads.lookback = '1 day'), 'sync.streams.loads.lookback: expected an ISO 8601 duration, got "1 day"'],
    ['number as text', (r) => (r.api.rateLimit = { requestsPerSecond: 'ten' }), 'api.rateLimit.requestsPerSecond: expected a number, got string "ten"'],
    ['unknown key with suggestion', (r) => (r.sync.streams.loads.lookbak = 'PT1M'), 'sync.streams.loads.lookbak: unknown key (did you mean "lookback"?)'],
    ['missing required', (r) => delete r.api.variant, 'api.variant: is required (one of "main", "brokerage")'],
    ['missing required object', (r) => delete r.api.auth, 'api.auth: is required'],
    ['enum', (r) => (r.api.variant = 'mian'), 'api.variant: expected one of "main", "brokerage", got string "mian"'],
    ['url', (r) => (r.api.baseUrl = 'ftp://x'), 'api.baseUrl: expected an http(s) URL such as https://api.example.com/v1, got string "ftp://x"'],
    ['integer range', (r) => (r.api.rateLimit = { maxInFlight: 65 }), 'api.rateLimit.maxInFlight: expected a number at most 64, got number 65'],
    ['not positive', (r) => (r.api.rateLimit = { requestsPerSecond: 0 }), 'api.rateLimit.requestsPerSecond: expected a number greater than 0'],
    ['cron', (r) => (r.sync.defaults = { schedule: 'hourly' }), 'sync.defaults.schedule: expected a cron expression such as "*/5 * * * *", got string "hourly"'],
    ['datetime', (r) => (r.sync.streams.loads.initialFrom = '2024-01-01'), 'sync.streams.loads.initialFrom: expected an ISO 8601 date-time with a time zone such as 2024-01-01T00:00:00Z, got string "2024-01-01"'],
    ['page size', (r) => (r.sync.streams.loads.pageSize = 0), 'sync.streams.loads.pageSize: expected a number at least 1, got number 0'],
    ['list expected', (r) => (r.sync.streams.loads.sinks = 'erp_csv'), 'sync.streams.loads.sinks: expected a list, got string "erp_csv"'],
    ['option value', (r) => (r.sync.streams.loads.options = { a: [1] }), 'sync.streams.loads.options.a: expected a string, a number or a boolean, got a list'],
    ['mapping expected', (r) => (r.connectors.erp_csv.options = 3), 'connectors.erp_csv.options: expected a mapping, got number 3'],
    ['connector type', (r) => (r.connectors.erp_csv.type = 5), 'connectors.erp_csv.type: expected a string, got number 5'],
    ['both type and module', (r) => (r.connectors.erp_csv.module = './x.js'), 'connectors.erp_csv.module: give either type (built-in) or module (plug-in), not both'],
    ['connector without type or module', (r) => delete r.connectors.erp_csv.type, 'connectors.erp_csv.type: is required unless module is given (a built-in connector type such as csv, or module: ./path.js)'],
    ['connector name', (r) => (r.connectors['Erp-CSV'] = { type: 'csv' }), 'connectors.Erp-CSV: connector name must start with a lowercase letter and contain only a-z, 0-9 and _'],
    ['both auth forms', (r) => (r.api.auth.accessToken = 'tok-123456'), 'api.auth: give either clientId + clientSecret, or accessToken + refreshToken, not both'],
    ['half a token pair', (r) => (r.api.auth = { accessToken: 'tok-123456' }), 'api.auth.refreshToken: is required when accessToken is given'],
    ['no auth', (r) => (r.api.auth = {}), 'api.auth: give either clientId + clientSecret, or a pre-issued accessToken + refreshToken'],
    ['window order', (r) => (r.sync.streams.loads.minWindow = 'P8D'), 'sync.streams.loads.minWindow: must not be longer than maxWindow (691200000 ms > 604800000 ms)'],
    ['webhook secret', (r) => (r.webhooks = { enabled: true }), 'webhooks.secret: is required when webhooks are enabled'],
    ['listen address', (r) => (r.webhooks = { listen: '8080' }), 'webhooks.listen: expected host:port such as 127.0.0.1:8080, got string "8080"'],
    ['log pretty', (r) => (r.log = { pretty: 'maybe' }), 'log.pretty: expected auto or true/false, yes/no, y/n, on/off or 1/0, got string "maybe"'],
    ['unknown top-level key', (r) => (r.conectors = {}), 'conectors: unknown key (did you mean "connectors"?)'],
  ])('%s', async (_name, edit, expected) => {
    expect(await issuesOf(edit)).toContain(expected);
  });

  it('names the known streams for an unknown stream', async () => {
    const issues = await issuesOf((r) => (r.sync.streams.shipments = { sinks: ['erp_csv'] }));
    expect(issues).toEqual([
      'sync.streams.shipments: unknown key (expected one of: loads, invoices, bills, supportMoves, loadAudits, customerAudits, customers, consignees, webhookEvents, chargeCodes, loadDocumentTypes, customerDiscounts, customerRates, customerDynamicRates, events, loadDocuments, documentFiles)',
    ]);
    expect(await issuesOf((r) => (r.sync.streams.lods = { sinks: ['erp_csv'] }))).toEqual([
      'sync.streams.lods: unknown key (did you mean "loads"?)',
    ]);
  });

  it('names both the stream and the unknown connector in its sinks', async () => {
    expect(await issuesOf((r) => (r.sync.streams.loads.sinks = ['erp_csv', 'erp_sql']))).toEqual([
      'sync.streams.loads.sinks[1]: stream "loads" names connector "erp_sql", which is not defined under connectors (defined: erp_csv)',
    ]);
  });

  it('checks the connector documentFiles stores its files with', async () => {
    expect(await issuesOf((r) => (r.sync.streams.documentFiles = { sinks: ['erp_csv'], options: { filesTo: 'erp_docs' } }))).toEqual([
      'sync.streams.documentFiles.options.filesTo: stream "documentFiles" names connector "erp_docs", which is not defined under connectors (defined: erp_csv)',
    ]);
  });

  it('rejects an enabled stream without sinks, but accepts a disabled one', async () => {
    expect(await issuesOf((r) => (r.sync.streams.invoices = {}))).toEqual([
      'sync.streams.invoices.sinks: stream "invoices" is enabled but has no sinks (add connector names, or set enabled: false)',
    ]);
    const raw = minimalRaw();
    raw.sync.streams.invoices = { enabled: false };
    expect(parseConfig(raw).sync.streams.invoices?.enabled).toBe(false);
  });

  it('checks outbound sources against the connectors', async () => {
    expect(await issuesOf((r) => (r.outbound = { enabled: true, sources: ['erp_inbox'] }))).toEqual([
      'outbound.sources[0]: names connector "erp_inbox", which is not defined under connectors (defined: erp_csv)',
    ]);
  });

  it('lists every issue at once, not only the first', async () => {
    const issues = await issuesOf((r) => {
      r.api.variant = 'x';
      r.api.timeout = 'soon';
      r.log = { level: 'loud' };
      r.sync.streams.loads.sinks = ['missing'];
    });
    expect(issues).toHaveLength(4);
  });

  it('throws a ConfigError that names the source', () => {
    const raw = minimalRaw();
    raw.api.variant = 'x';
    expect(() => parseConfig(raw, { source: '/etc/freight-sync.yaml' })).toThrow(ConfigError);
    expect(() => parseConfig(raw, { source: '/etc/freight-sync.yaml' })).toThrow(/in \/etc\/freight-sync\.yaml/);
  });
});

describe('formatZodIssues for plug-ins', () => {
  const schema = z.strictObject({ delimiter: z.string().length(1), header: z.boolean() });

  it('prefixes the path of the block being validated', () => {
    const result = schema.safeParse({ delimiter: 5, header: true, quote: '"' }, { reportInput: true });
    expect(result.success).toBe(false);
    expect(formatZodIssues(result.error!, ['connectors', 'erp_csv', 'options'], { schema })).toEqual([
      'connectors.erp_csv.options.delimiter: expected a string, got number 5',
      'connectors.erp_csv.options.quote: unknown key (expected one of: delimiter, header)',
    ]);
  });

  it('quotes the value from `input` when the parse did not report it', () => {
    const input = { delimiter: ';', header: 'yes' };
    const result = schema.safeParse(input);
    expect(formatZodIssues(result.error!, ['x'], { input })).toEqual(['x.header: expected true or false, got string "yes"']);
  });
});

describe('closestKey', () => {
  it('suggests only plausible typos', () => {
    expect(closestKey('lookbak', ['lookback', 'safetyLag'])).toBe('lookback');
    expect(closestKey('pagesize', ['pageSize'])).toBe('pageSize');
    expect(closestKey('sftpHost', ['enabled', 'sinks'])).toBeUndefined();
  });
});
