import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { validateDeployment } from '../../src/app/validate-deployment.js';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/config-fixtures.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A deployment with a file-backed SQL sink, a CSV drop, a local inbox and a state database: all paths relative. */
function deployment(): Record<string, any> {
  return {
    api: { variant: 'main', baseUrl: 'http://127.0.0.1:9/v1', auth: { clientId: 'c', clientSecret: 'not-a-real-secret' } },
    state: { path: './state/freight-sync.sqlite' },
    sync: {
      streams: {
        loads: { sinks: ['erp', 'drop'] },
        customers: { sinks: ['erp'] },
        bills: { enabled: false, sinks: ['drop'] },
      },
    },
    connectors: {
      erp: { type: 'sql', options: { dialect: 'sqlite', filename: './erp/erp.sqlite' } },
      drop: { type: 'csv', options: { directory: './out' } },
      inbox: { type: 'inbox', options: { dir: './inbox' } },
    },
    outbound: { enabled: true, sources: ['inbox'] },
  };
}

async function validate(raw: Record<string, any>, files: Record<string, string> = {}) {
  const dir = tempDir({ 'freight-sync.yaml': stringify(raw), ...files });
  const loaded = await loadConfig({ configPath: path.join(dir, 'freight-sync.yaml'), env: {} });
  return { dir, loaded, result: validateDeployment(loaded) };
}

async function problems(raw: Record<string, any>, files: Record<string, string> = {}) {
  const { dir, loaded, result } = await validate(raw, files);
  const error = await result.then(
    () => {
      throw new Error('expected a ConfigError, but the deployment was accepted');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return { dir, filePath: loaded.filePath, error: error as ConfigError };
}

describe('validateDeployment', () => {
  it('returns the parsed connector options, resolved mappings and streams, and creates nothing', async () => {
    const { dir, result } = await validate(deployment());
    const validated = await result;
    expect(validated.streams.map((s) => s.definition.name)).toEqual(['loads', 'customers']);
    expect(validated.streams[0]!.options).toEqual({ includeChargeSets: false, includeVendorPay: false });
    const erp = validated.connectors.find((c) => c.name === 'erp')!;
    expect(erp.config).toMatchObject({ dialect: 'sqlite', deleteMode: 'soft', createTables: true });
    expect([...erp.mappings.keys()]).toEqual(['loads', 'customers']);
    // A disabled stream's mapping is not resolved.
    expect([...validated.connectors.find((c) => c.name === 'drop')!.mappings.keys()]).toEqual(['loads']);
    expect(validated.connectors.find((c) => c.name === 'inbox')!.mappings.size).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['freight-sync.yaml']);
  });

  it.each([
    ['sql dialect', (r: any) => (r.connectors.erp.options.dialect = 'postgresql'), 'connectors.erp.options.dialect: expected one of "sqlite", "postgres", "mysql", "mssql", got string "postgresql"'],
    ['sql deleteMode', (r: any) => (r.connectors.erp.options.deleteMode = 'sof'), 'connectors.erp.options.deleteMode: expected one of "soft", "hard", got string "sof"'],
    ['inbox key', (r: any) => (r.connectors.inbox.options.dirr = './x'), 'connectors.inbox.options.dirr: unknown key (did you mean "dir"?)'],
    ['stream option', (r: any) => (r.sync.streams.loads.options = { includeChargeSet: true }), 'sync.streams.loads.options.includeChargeSet: unknown key (did you mean "includeChargeSets"?)'],
    ['page size', (r: any) => (r.sync.streams.loads.pageSize = 100), 'sync.streams.loads.pageSize: 100 is over the maximum page size 50 of this endpoint on main'],
    ['stream of the other variant', (r: any) => ((r.api.variant = 'brokerage'), (r.sync.streams.bills.enabled = true)), 'sync.streams.bills: the bills stream is not available on the brokerage variant (only main)'],
    ['mapping', (r: any) => (r.connectors.drop.mappings = { loads: { table: 'loads', key: ['id'], columns: [{ name: 'id', path: 'id', transform: { type: 'nope' } }] } }), 'connectors.drop.mappings.loads.columns[0].transform'],
    ['mapping of a stream not sent there', (r: any) => (r.connectors.drop.mappings = { customers: {} }), 'connectors.drop.mappings.customers: connector drop does not receive stream "customers" (it receives: loads, bills)'],
    ['sink that cannot receive records', (r: any) => (r.sync.streams.customers.sinks = ['inbox']), 'sync.streams.customers.sinks[0]: connector inbox cannot receive records (no sink capability with these options)'],
    ['outbound source without staging', (r: any) => (r.outbound.sources = ['inbox', 'erp']), 'outbound.sources[1]: connector erp cannot supply commands (no source capability with these options; sql needs staging:, sftp needs inbox:)'],
    ['unknown connector type', (r: any) => (r.connectors.drop.type = 'ftp'), 'connectors.drop.type: unknown connector type "ftp"'],
    ['webhook path on an ops route', (r: any) => (r.webhooks = { enabled: true, secret: 'whsec-x', listen: '127.0.0.1:9090', path: '/metrics' }), 'webhooks.path: /metrics is an ops endpoint on the same address as http.listen (127.0.0.1:9090)'],
    ['webhook path under the console', (r: any) => ((r.webhooks = { enabled: true, secret: 'whsec-x', listen: '127.0.0.1:9090', path: '/console/hooks' }), (r.http = { console: { enabled: true, auth: { bearerToken: 't' } } })), 'webhooks.path: /console/hooks is under the web console (/console/) on the same address as http.listen (127.0.0.1:9090)'],
  ])('refuses a bad %s, naming the file and the config path', async (_what, breakIt, expected) => {
    const raw = deployment();
    breakIt(raw);
    const { dir, filePath, error } = await problems(raw);
    expect(error.issues.join('\n')).toContain(expected);
    expect(error.message).toContain(`invalid configuration in ${filePath}:`);
    expect(fs.readdirSync(dir)).toEqual(['freight-sync.yaml']);
  });

  it('asks a connector to check its options and mappings together (sql: a name too long for the database)', async () => {
    const raw = deployment();
    const column = `c${'x'.repeat(70)}`;
    raw.connectors.erp.mappings = { loads: { table: 'loads', key: ['id'], columns: [{ name: 'id', path: 'id' }, { name: column, path: 'x' }] } };
    const { dir, error } = await problems(raw);
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatch(new RegExp(`^connectors\\.erp\\.mappings\\.loads: .*"${column}" .*longer than 63 characters.*\\(dialect sqlite\\)$`));
    expect(fs.readdirSync(dir)).toEqual(['freight-sync.yaml']);
  });

  it('lists every problem at once', async () => {
    const raw = deployment();
    raw.connectors.erp.options = { dialect: 'postgresql', host: 'db', deleteMode: 'sof' };
    raw.connectors.inbox.options.dirr = './x';
    raw.sync.streams.loads.options = { includeChargeSet: true };
    const { error } = await problems(raw);
    expect(error.issues).toEqual([
      'sync.streams.loads.options.includeChargeSet: unknown key (did you mean "includeChargeSets"?)',
      'connectors.erp.options.dialect: expected one of "sqlite", "postgres", "mysql", "mssql", got string "postgresql"',
      'connectors.erp.options.deleteMode: expected one of "soft", "hard", got string "sof"',
      'connectors.inbox.options.dirr: unknown key (did you mean "dir"?)',
    ]);
  });

  it('imports a third-party connector for its configSchema but never creates it', async () => {
    const zod = import.meta.resolve('zod');
    const plugin = `
      import { z } from ${JSON.stringify(zod)};
      import fs from 'node:fs';
      export default { name: 'marker', configSchema: z.strictObject({ target: z.string() }),
        create(options) { fs.writeFileSync(options.target, 'created'); return { async close() {} }; } };`;
    const raw = deployment();
    raw.connectors.plug = { module: './plugin.js', options: { target: './created.txt' } };
    const { dir, result } = await validate(raw, { 'plugin.js': plugin });
    const validated = await result;
    expect(validated.connectors.find((c) => c.name === 'plug')!.factory.name).toBe('marker');
    expect(fs.existsSync(path.join(dir, 'created.txt'))).toBe(false);

    raw.connectors.plug.options = { targt: './created.txt' };
    const bad = await problems(raw, { 'plugin.js': plugin });
    expect(bad.error.issues).toContain('connectors.plug.options.targt: unknown key (did you mean "target"?)');
  });

  it('names the module path of a module that is not a connector', async () => {
    const raw = deployment();
    raw.connectors.plug = { module: path.join(repoRoot, 'examples/connectors/missing.js') };
    const { error } = await problems(raw);
    expect(error.issues.join('\n')).toMatch(/connectors\.plug\.module: cannot load connector module .*missing\.js/);
  });
});
